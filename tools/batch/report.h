// The batch run's outputs: the JSON record (every job with, where observed, its GPU memory over
// time; the summary; GPU samples) and the summary table printed at the end.
#ifndef MGB_TOOLS_BATCH_REPORT_H
#define MGB_TOOLS_BATCH_REPORT_H

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "gpu_sampler.h"
#include "runner.h"

namespace mgb::batch {

struct Summary {
  int jobs = 0;
  int succeeded = 0;     // exited 0
  int crashed = 0;       // started and did not exit 0
  int oom = 0;           // crashed of out-of-memory
  int not_run = 0;       // never started (interrupted batch)
  int check_failed = 0;  // printed MGB_RESULT FAIL
  double makespan_s = 0;
  double throughput_jobs_per_hour = 0;  // succeeded jobs per hour of makespan
  double mean_turnaround_s = 0;         // end - queued, over finished jobs
  double mean_wait_s = 0;               // start - queued, over started jobs
  double crash_percent = 0;
};

struct RunInfo {
  std::string label;
  std::string jobs_file;
  std::string socket;
  int workers = 0;
  std::string order = "fifo";      // or "longest-first" (from --history)
  std::string gpu_note;            // why there are no GPU samples, if there are none
  std::string per_process_memory;  // why jobs have no memory_samples ("unavailable: ..."), if so
  std::vector<std::pair<double, int>> worker_changes;  // --workers auto: [t_s, count] per change
  int64_t host_reserve_bytes = -1;  // the host memory gate's reserve; -1: the gate was off
};

Summary Summarize(const BatchResult &result);
std::string BatchResultToJson(const BatchResult &result, const RunInfo &info,
                              const std::vector<GpuSample> &gpu_samples);
void PrintSummaryTable(std::ostream &out, const BatchResult &result, const RunInfo &info);

}  // namespace mgb::batch

#endif  // MGB_TOOLS_BATCH_REPORT_H
