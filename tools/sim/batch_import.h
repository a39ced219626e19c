// Real runs into the simulator: reading a `mgb batch` result JSON back, turning solo runs into
// job profiles, and re-simulating a recorded run to see how far the simulation lands from the
// measured makespan (the 10% check).
#ifndef MGB_TOOLS_SIM_BATCH_IMPORT_H
#define MGB_TOOLS_SIM_BATCH_IMPORT_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "job_profile.h"
#include "mgb/core/scheduler.h"
#include "simulator.h"
#include "slowdown_model.h"

namespace mgb::sim {

// The fields of a `mgb batch` result the simulator uses (tools/batch/report.cpp writes them).
struct RecordedJob {
  std::string name;
  uint64_t memory_bytes = 0;
  double queued_s = 0.0;
  double started_s = -1.0;
  double ended_s = -1.0;
  double kernel_ms = 0.0;
  bool crashed = false;
  // Its processes' GPU memory over time ([t_s, bytes], t since the batch start), and its peak,
  // when `mgb batch` could observe it per process (0 / empty: not observed).
  std::vector<std::pair<double, uint64_t>> memory_samples;
  uint64_t peak_memory_bytes = 0;
};

struct RecordedRun {
  std::string source;  // the file, for messages
  std::string label;
  int workers = 0;
  double makespan_s = 0.0;
  std::vector<RecordedJob> jobs;
};

// InvalidArgument naming the file and field; NotFound when the file cannot be opened.
absl::StatusOr<RecordedRun> RecordedRunFromJson(const nlohmann::json &json,
                                                const std::string &source);
absl::StatusOr<RecordedRun> ReadRecordedRun(const std::string &path);

// One profile per job of a run where each job ran alone on a GPU (single-assignment): one task
// spanning the process (solo_s = ended - started), busy fraction = kernel time / run time, the
// default launch shape. Memory: where the run observed the job's memory, memory_bytes = its peak
// and `memory` steps follow its samples (at = (t - started) / run time), each less
// `context_bytes` (NVML counts the CUDA context in a process's memory; the simulator charges it
// separately); otherwise the job list's estimate throughout. Crashed or unfinished jobs, a job
// with neither observed memory nor an estimate, or a duplicate name are InvalidArgument naming
// the job.
absl::StatusOr<Trace> ProfilesFromSoloRun(const RecordedRun &run,
                                          uint64_t context_bytes = core::kDefaultContextReserve);

// A co-run experiment recorded by `mgb batch`: every job of `run` started together on ONE GPU
// (e.g. mgbd --policy cg:K on a one-GPU node, K workers, K jobs). Solo time, busy fraction and
// launch shape come from the job's profile; measured time is its recorded run time.
// InvalidArgument naming a job with no one-task profile or no co-run time.
absl::StatusOr<CoRunGroup> CoRunGroupFromBatch(const RecordedRun &run, const Trace &profiles,
                                               uint64_t warp_capacity);

struct RecordedCheck {
  double measured_makespan_s = 0.0;
  double simulated_makespan_s = 0.0;
  double relative_error = 0.0;  // |simulated - measured| / measured
  SimResult simulation;
};

// Re-simulates `run`: each of its jobs is the profile of the same name in `profiles`, arriving
// when the run queued it; node, policy and model from `options` (workers: options.workers if
// non-zero, else the run's). InvalidArgument naming a job with no profile; a failed simulation's
// error.
absl::StatusOr<RecordedCheck> CheckRecordedRun(const RecordedRun &run, const Trace &profiles,
                                               SimOptions options);

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_BATCH_IMPORT_H
