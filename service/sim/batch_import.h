// Real runs into the simulator: reading a `mgb batch` result JSON back, turning solo runs into
// job profiles, and re-simulating a recorded run to see how far the simulation lands from the
// measured makespan (the 10% check).
#ifndef MGB_SERVICE_SIM_BATCH_IMPORT_H
#define MGB_SERVICE_SIM_BATCH_IMPORT_H

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "job_profile.h"
#include "simulator.h"
#include "slowdown_model.h"

namespace mgb::sim {

// The fields of a `mgb batch` result the simulator uses (service/batch/report.cpp writes them).
struct RecordedJob {
  std::string name;
  uint64_t memory_bytes = 0;
  double queued_s = 0.0;
  double started_s = -1.0;
  double ended_s = -1.0;
  double kernel_ms = 0.0;
  bool crashed = false;
};

struct RecordedRun {
  std::string source;      // the file, for messages
  std::string label;
  int workers = 0;
  double makespan_s = 0.0;
  std::vector<RecordedJob> jobs;
};

// Throws InputError naming the file and field.
RecordedRun RecordedRunFromJson(const nlohmann::json& json, const std::string& source);
RecordedRun ReadRecordedRun(const std::string& path);

// One profile per job of a run where each job ran alone on a GPU (single-assignment): one task
// spanning the process (solo_s = ended - started), busy fraction = kernel time / run time, memory
// = the job list's estimate, the default launch shape. Crashed or unfinished jobs, a job without
// a memory estimate, or a duplicate name are errors naming the job.
Trace ProfilesFromSoloRun(const RecordedRun& run);

// A co-run experiment recorded by `mgb batch`: every job of `run` started together on ONE GPU
// (e.g. mgbd --policy cg:K on a one-GPU node, K workers, K jobs). Solo time, busy fraction and
// launch shape come from the job's profile; measured time is its recorded run time.
CoRunGroup CoRunGroupFromBatch(const RecordedRun& run, const Trace& profiles, uint64_t warp_capacity);

struct RecordedCheck {
  double measured_makespan_s = 0.0;
  double simulated_makespan_s = 0.0;
  double relative_error = 0.0;     // |simulated - measured| / measured
  SimResult simulation;
};

// Re-simulates `run`: each of its jobs is the profile of the same name in `profiles`, arriving
// when the run queued it; node, policy and model from `options` (workers: options.workers if
// non-zero, else the run's). Throws InputError for a job with no profile.
RecordedCheck CheckRecordedRun(const RecordedRun& run, const Trace& profiles, SimOptions options);

}  // namespace mgb::sim

#endif  // MGB_SERVICE_SIM_BATCH_IMPORT_H
