// The report of a simulated run: summary figures, JSON and the summary table.
//
// `mgb batch` (service/batch/) owns the report format; real and simulated runs must print the
// same. Until batch exposes its writer, these functions are the one place that writes it; swap
// their bodies for calls into batch's writer, nothing else in sim/ writes reports.
#ifndef MGB_SERVICE_SIM_RUN_REPORT_H
#define MGB_SERVICE_SIM_RUN_REPORT_H

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "simulator.h"

namespace mgb::sim {

struct RunSummary {
  size_t jobs = 0;
  size_t completed = 0;
  size_t crashed = 0;                  // died of out-of-memory
  size_t rejected = 0;                 // refused by the scheduler (a request no GPU can hold)
  double makespan_s = 0.0;             // from time 0 (the batch start) to the last job's end
  double throughput_jobs_per_hour = 0.0;  // completed jobs / makespan
  double mean_turnaround_s = 0.0;      // completed jobs: end - queued
  double mean_gpu_wait_s = 0.0;        // completed jobs: time their tasks waited for a GPU
  double mean_sm_busy = 0.0;           // over GPUs and the makespan
  double mean_memory_used = 0.0;
};

RunSummary Summarise(const SimResult& result);

// `normalised_to` is the throughput of the single-assignment run of the same trace, when run.
nlohmann::json ReportJson(const SimResult& result, const std::string& label,
                          std::optional<double> single_throughput);
// One row per policy; throughput relative to single-assignment when it was run.
void PrintSummaryTable(const std::vector<const SimResult*>& results, std::ostream& out);

}  // namespace mgb::sim

#endif  // MGB_SERVICE_SIM_RUN_REPORT_H
