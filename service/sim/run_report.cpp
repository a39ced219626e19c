#include "run_report.h"

#include <cstdio>
#include <numeric>

namespace mgb::sim {
namespace {

const char* OutcomeName(JobOutcome outcome) {
  switch (outcome) {
    case JobOutcome::kCompleted: return "completed";
    case JobOutcome::kOutOfMemory: return "out_of_memory";
    case JobOutcome::kRejected: return "rejected";
  }
  return "unknown";
}

double Mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

const SimResult* FindSingle(const std::vector<const SimResult*>& results) {
  for (const SimResult* r : results) {
    if (r->policy == "single") return r;
  }
  return nullptr;
}

}  // namespace

RunSummary Summarise(const SimResult& result) {
  RunSummary s;
  s.jobs = result.jobs.size();
  double turnaround = 0.0, wait = 0.0;
  for (const JobRecord& job : result.jobs) {
    s.makespan_s = std::max(s.makespan_s, job.ended_s);
    switch (job.outcome) {
      case JobOutcome::kCompleted:
        ++s.completed;
        turnaround += job.ended_s - job.queued_s;
        wait += job.gpu_wait_s;
        break;
      case JobOutcome::kOutOfMemory: ++s.crashed; break;
      case JobOutcome::kRejected: ++s.rejected; break;
    }
  }
  if (s.completed) {
    s.mean_turnaround_s = turnaround / static_cast<double>(s.completed);
    s.mean_gpu_wait_s = wait / static_cast<double>(s.completed);
  }
  if (s.makespan_s > 0) s.throughput_jobs_per_hour = s.completed * 3600.0 / s.makespan_s;
  s.mean_sm_busy = Mean(result.mean_sm_busy);
  s.mean_memory_used = Mean(result.mean_memory_used);
  return s;
}

nlohmann::json ReportJson(const SimResult& result, const std::string& label,
                          std::optional<double> single_throughput) {
  const RunSummary s = Summarise(result);
  nlohmann::json summary = {{"jobs", s.jobs},
                            {"completed", s.completed},
                            {"crashed", s.crashed},
                            {"rejected", s.rejected},
                            {"makespan_s", s.makespan_s},
                            {"throughput_jobs_per_hour", s.throughput_jobs_per_hour},
                            {"mean_turnaround_s", s.mean_turnaround_s},
                            {"mean_gpu_wait_s", s.mean_gpu_wait_s},
                            {"mean_sm_busy", s.mean_sm_busy},
                            {"mean_memory_used", s.mean_memory_used}};
  if (single_throughput && *single_throughput > 0) {
    summary["throughput_vs_single"] = s.throughput_jobs_per_hour / *single_throughput;
  }
  nlohmann::json jobs = nlohmann::json::array();
  for (const JobRecord& job : result.jobs) {
    nlohmann::json j = {{"name", job.name},
                        {"queued_s", job.queued_s},
                        {"started_s", job.started_s},
                        {"ended_s", job.ended_s},
                        {"solo_s", job.solo_s},
                        {"outcome", OutcomeName(job.outcome)},
                        {"exit_status", job.outcome == JobOutcome::kCompleted ? 0 : 1},
                        {"out_of_memory", job.outcome == JobOutcome::kOutOfMemory},
                        {"gpu_wait_s", job.gpu_wait_s},
                        {"gpus", job.gpus}};
    if (!job.error.empty()) j["error"] = job.error;
    jobs.push_back(std::move(j));
  }
  nlohmann::json samples = nlohmann::json::array();
  for (const UtilisationSample& u : result.utilisation) {
    samples.push_back({{"start_s", u.start_s},
                       {"end_s", u.end_s},
                       {"sm_busy", u.sm_busy},
                       {"memory_used", u.memory_used}});
  }
  return {{"label", label},
          {"simulated", true},
          {"policy", result.policy},
          {"workers", result.workers},
          {"gpus", result.gpu_names},
          {"slowdown_model", result.model_source},
          {"decisions", result.decisions},
          {"summary", std::move(summary)},
          {"jobs", std::move(jobs)},
          {"utilisation", {{"per_gpu_mean_sm_busy", result.mean_sm_busy},
                           {"per_gpu_mean_memory_used", result.mean_memory_used},
                           {"samples", std::move(samples)}}}};
}

void PrintSummaryTable(const std::vector<const SimResult*>& results, std::ostream& out) {
  const SimResult* single = FindSingle(results);
  const double base = single ? Summarise(*single).throughput_jobs_per_hour : 0.0;
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %7s %6s %7s %11s %10s %8s %14s %8s %8s\n", "policy",
                "workers", "jobs", "crashed", "makespan_s", "jobs/hour", "vs_single",
                "turnaround_s", "sm_busy", "mem_used");
  out << line;
  for (const SimResult* r : results) {
    const RunSummary s = Summarise(*r);
    char ratio[32] = "-";
    if (base > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", s.throughput_jobs_per_hour / base);
    std::snprintf(line, sizeof line, "%-10s %7u %6zu %7zu %11.1f %10.1f %8s %14.1f %7.0f%% %7.0f%%\n",
                  r->policy.c_str(), r->workers, s.jobs, s.crashed, s.makespan_s,
                  s.throughput_jobs_per_hour, ratio, s.mean_turnaround_s, 100 * s.mean_sm_busy,
                  100 * s.mean_memory_used);
    out << line;
  }
}

}  // namespace mgb::sim
