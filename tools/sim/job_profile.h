// What the simulator knows about a job: a process that runs one or more GPU tasks between phases of
// host work, recorded from a real run (or generated), and the trace of such jobs with arrival
// times.
#ifndef MGB_TOOLS_SIM_JOB_PROFILE_H
#define MGB_TOOLS_SIM_JOB_PROFILE_H

#include <cstdint>
#include <string>
#include <vector>

#include "mgb/core/gpu.h"

namespace mgb::sim {

// From `at` (a fraction 0..1 of the task's progress) on, the task really holds `bytes` of device
// memory. A list of steps is "memory over time"; its largest value is the task's peak.
struct MemoryStep {
  double at = 0.0;
  uint64_t bytes = 0;
};

// One GPU task: TaskBegin -> kernels and copies -> TaskEnd.
struct TaskProfile {
  double host_before_s = 0.0;      // host-only work of the process before the task begins
  double solo_s = 0.0;             // begin -> end when the task is alone on its GPU
  double busy_fraction = 1.0;      // share of solo_s the GPU executes the task's kernels
  uint64_t memory_bytes = 0;       // what the probe asks at TaskBegin (the reservation)
  std::vector<MemoryStep> memory;  // real usage over progress; empty = memory_bytes throughout
  core::LaunchShape shape;         // the task's widest launch

  // Real usage at a point of progress (0..1).
  uint64_t MemoryAt(double progress) const;
  // The largest real usage.
  uint64_t PeakMemory() const;
  // Progress points (ascending, > 0 and < 1) where real usage changes.
  std::vector<double> MemoryChangePoints() const;
};

struct JobProfile {
  std::string name;
  double arrival_s = 0.0;          // when the job is queued, from the start of the run
  std::vector<TaskProfile> tasks;  // in program order
  double host_after_s = 0.0;       // host-only work after the last task (checking, writing)

  // Wall time of the job alone on the node: host phases plus tasks at solo speed.
  double SoloSeconds() const;
};

struct Trace {
  std::string comment;           // where the profiles came from (kept through files)
  std::vector<JobProfile> jobs;  // any order; the simulator serves them by arrival, then index
};

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_JOB_PROFILE_H
