// A discrete-event simulation of one node: jobs of a trace arrive, take a worker slot, run their
// host phases and GPU tasks, and the REAL scheduling core (mgb::core::Scheduler, the code inside
// mgbd) places every task. The simulator owns only what hardware and processes do: time passing,
// co-running tasks slowing each other (SlowdownModel), and memory being physical: a job whose
// allocation would take a GPU past its capacity dies of out-of-memory, as under MPS.
#ifndef MGB_TOOLS_SIM_SIMULATOR_H
#define MGB_TOOLS_SIM_SIMULATOR_H

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "job_profile.h"
#include "mgb/core/gpu.h"
#include "mgb/core/scheduler.h"
#include "slowdown_model.h"

namespace mgb::sim {

struct SimOptions {
  std::vector<core::GpuSpec> gpus;
  core::Options core;  // policy and the context reserve the core charges
  uint64_t context_bytes = core::kDefaultContextReserve;  // what a CUDA context really costs
  uint32_t workers = 0;  // job slots, as `mgb batch --workers`; 0 = no limit
  SlowdownModel model;
  size_t utilisation_buckets = 60;  // samples of the utilisation time series
};

enum class JobOutcome { kCompleted, kOutOfMemory, kRejected };

struct JobRecord {
  std::string name;
  double queued_s = 0.0;   // arrival
  double started_s = 0.0;  // took a worker slot (process start)
  double ended_s = 0.0;    // process end (completion or death)
  double solo_s = 0.0;     // its run time alone (from the profile)
  JobOutcome outcome = JobOutcome::kCompleted;
  std::string error;          // why it died, for crashed and rejected jobs
  uint64_t memory_bytes = 0;  // the largest reservation its tasks asked for
  double kernel_s = 0.0;      // time its kernels ran (the busy part, stretched)
  std::vector<int> gpus;      // GPUs its tasks ran on, in task order
  double gpu_wait_s = 0.0;    // time its tasks waited in mgbd's queue
};

// Per GPU, time-weighted means over one bucket of the run.
struct UtilisationSample {
  double start_s = 0.0;
  double end_s = 0.0;
  std::vector<double> sm_busy;      // min(1, sum of busy_fraction x occupancy), per GPU
  std::vector<double> memory_used;  // real bytes in use / capacity, per GPU
};

struct SimResult {
  std::string policy;
  uint32_t workers = 0;
  std::vector<std::string> gpu_names;
  std::vector<uint64_t> gpu_memory_bytes;
  std::vector<JobRecord> jobs;  // trace order
  std::vector<UtilisationSample> utilisation;
  std::vector<double> mean_sm_busy;      // per GPU, over the makespan
  std::vector<double> mean_memory_used;  // per GPU, over the makespan
  uint64_t decisions = 0;                // the core's placements
  uint64_t events = 0;                   // simulation events handled
  std::string model_source;
};

// Fails (INVALID_ARGUMENT) on an empty trace or no GPUs; the core's own errors for a task
// (e.g. more memory than any GPU) reject that job, as mgbd would answer the real process.
absl::StatusOr<SimResult> Simulate(const Trace &trace, const SimOptions &options);

// Identical GPUs named g0..g{n-1}.
std::vector<core::GpuSpec> UniformGpus(size_t count, uint64_t memory_bytes, uint32_t sms);

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_SIMULATOR_H
