#include "run_report.h"

#include <cstdio>
#include <numeric>
#include <sstream>

namespace mgb::sim {
namespace {

// Finer than batch's crashed/oom: a rejected job (refused by the core) did not crash.
const char *OutcomeName(JobOutcome outcome) {
  switch (outcome) {
    case JobOutcome::kCompleted: return "completed";
    case JobOutcome::kOutOfMemory: return "out_of_memory";
    case JobOutcome::kRejected: return "rejected";
  }
  return "unknown";
}

double Mean(const std::vector<double> &v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

batch::RunInfo InfoOf(const SimResult &result, const std::string &label,
                      const std::string &trace_source) {
  batch::RunInfo info;
  info.label = label;
  info.jobs_file = trace_source;
  info.workers = static_cast<int>(result.workers);
  info.gpu_note =
      "simulated node: gpu_samples are the simulator's time-weighted means per "
      "sample (util = SM demand, mem_used = real bytes held), not NVML readings";
  return info;
}

// batch's GPU samples from the simulator's utilisation buckets (at each bucket's start).
std::vector<batch::GpuSample> SamplesOf(const SimResult &result) {
  std::vector<batch::GpuSample> samples;
  for (const UtilisationSample &u : result.utilisation) {
    batch::GpuSample s;
    s.t_s = u.start_s;
    for (size_t g = 0; g < u.sm_busy.size(); ++g) {
      batch::GpuReading r;
      r.util_percent = static_cast<unsigned>(std::lround(100 * u.sm_busy[g]));
      r.mem_total_bytes = result.gpu_memory_bytes[g];
      r.mem_used_bytes =
          static_cast<uint64_t>(u.memory_used[g] * static_cast<double>(r.mem_total_bytes));
      s.gpus.push_back(r);
    }
    samples.push_back(std::move(s));
  }
  return samples;
}

}  // namespace

batch::BatchResult ToBatchResult(const SimResult &result) {
  batch::BatchResult out;
  for (const JobRecord &job : result.jobs) {
    batch::JobRecord r;
    r.job.name = job.name;
    r.job.argv = {job.name};
    r.job.memory_bytes = job.memory_bytes;
    r.job.arrival_s = job.queued_s;
    r.queued_s = job.queued_s;
    r.started_s = job.started_s;
    r.ended_s = job.ended_s;
    r.crashed = job.outcome != JobOutcome::kCompleted;
    r.oom = job.outcome == JobOutcome::kOutOfMemory;
    r.exit_code = r.crashed ? 1 : 0;  // a CUDA program that fails an allocation exits non-zero
    r.kernels.push_back({"simulated", job.kernel_s * 1000.0, static_cast<long>(job.gpus.size())});
    r.stderr_path = job.error;  // no log files in a simulation: the reason it died, if it did
    out.records.push_back(std::move(r));
    out.makespan_s = std::max(out.makespan_s, job.ended_s);
  }
  return out;
}

batch::Summary SummaryOf(const SimResult &result) {
  return batch::Summarize(ToBatchResult(result));
}

nlohmann::json ReportJson(const SimResult &result, const std::string &label,
                          const std::string &trace_source,
                          std::optional<double> single_throughput) {
  nlohmann::json json = nlohmann::json::parse(batch::BatchResultToJson(
      ToBatchResult(result), InfoOf(result, label, trace_source), SamplesOf(result)));
  json["simulated"] = true;
  json["policy"] = result.policy;
  json["gpus"] = result.gpu_names;
  json["slowdown_model"] = result.model_source;
  json["decisions"] = result.decisions;
  json["summary"]["mean_sm_busy"] = Mean(result.mean_sm_busy);
  json["summary"]["mean_memory_used"] = Mean(result.mean_memory_used);
  const batch::Summary s = SummaryOf(result);
  if (single_throughput && *single_throughput > 0) {
    json["summary"]["throughput_vs_single"] = s.throughput_jobs_per_hour / *single_throughput;
  }
  for (size_t i = 0; i < result.jobs.size(); ++i) {
    json["jobs"][i]["gpus"] = result.jobs[i].gpus;
    json["jobs"][i]["gpu_wait_s"] = result.jobs[i].gpu_wait_s;
    json["jobs"][i]["solo_s"] = result.jobs[i].solo_s;
    json["jobs"][i]["outcome"] = OutcomeName(result.jobs[i].outcome);
  }
  return json;
}

void PrintRunTable(const SimResult &result, const std::string &label, std::ostream &out,
                   size_t max_job_rows) {
  std::ostringstream table;
  batch::PrintSummaryTable(table, ToBatchResult(result), InfoOf(result, label, ""));
  if (result.jobs.size() <= max_job_rows) {
    out << table.str();
    return;
  }
  // The summary is batch's last line.
  std::string text = table.str();
  if (!text.empty() && text.back() == '\n') text.pop_back();
  out << text.substr(text.rfind('\n') + 1) << "\n";
}

void PrintPolicyTable(const std::vector<const SimResult *> &results, std::ostream &out) {
  double base = 0.0;
  for (const SimResult *r : results) {
    if (r->policy == "single") base = SummaryOf(*r).throughput_jobs_per_hour;
  }
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %7s %7s %7s %11s %10s %9s %13s %8s %8s\n", "policy",
                "workers", "jobs", "crashed", "makespan_s", "jobs/hour", "vs_single",
                "turnaround_s", "sm_busy", "mem_used");
  out << line;
  for (const SimResult *r : results) {
    const batch::Summary s = SummaryOf(*r);
    char ratio[32] = "-";
    if (base > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", s.throughput_jobs_per_hour / base);
    std::snprintf(line, sizeof line, "%-10s %7u %7d %7d %11.1f %10.1f %9s %13.1f %7.0f%% %7.0f%%\n",
                  r->policy.c_str(), r->workers, s.jobs, s.crashed, s.makespan_s,
                  s.throughput_jobs_per_hour, ratio, s.mean_turnaround_s,
                  100 * Mean(r->mean_sm_busy), 100 * Mean(r->mean_memory_used));
    out << line;
  }
}

}  // namespace mgb::sim
