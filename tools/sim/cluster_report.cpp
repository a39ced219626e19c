#include "cluster_report.h"

#include <cstdio>
#include <numeric>

#include "run_report.h"

namespace mgb::sim {
namespace {

double Mean(const std::vector<double> &v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

}  // namespace

ClusterSummary SummariseCluster(const ClusterResult &result, double wall_s) {
  const SimResult &run = result.run;
  const batch::Summary batch = SummaryOf(run);
  ClusterSummary s;
  s.policy = run.policy;
  s.jobs = run.jobs.size();
  s.makespan_s = batch.makespan_s;
  s.throughput_jobs_per_hour = batch.throughput_jobs_per_hour;
  s.mean_slurm_wait_s = batch.mean_wait_s;
  double turnaround = 0.0;
  for (const JobRecord &job : run.jobs) {
    switch (job.outcome) {
      case JobOutcome::kCompleted:
        ++s.completed;
        turnaround += job.ended_s - job.queued_s;
        break;
      case JobOutcome::kOutOfMemory: ++s.out_of_memory; break;
      case JobOutcome::kRejected: ++s.rejected; break;
    }
  }
  if (s.completed) s.mean_turnaround_s = turnaround / static_cast<double>(s.completed);
  s.mean_memory_used = Mean(run.mean_memory_used);
  s.mean_sm_busy = Mean(run.mean_sm_busy);
  s.peak_pending = result.peak_pending;
  s.wall_s = wall_s;
  return s;
}

void PrintClusterTable(const std::vector<ClusterSummary> &rows, std::ostream &out) {
  char line[320];
  std::snprintf(line, sizeof line, "%-10s %7s %9s %7s %8s %11s %10s %13s %11s %11s %8s %8s %7s\n",
                "policy", "jobs", "completed", "crashed", "rejected", "makespan_s", "jobs/hour",
                "turnaround_s", "slurm_wait", "max_pending", "mem_used", "sm_busy", "wall_s");
  out << line;
  for (const ClusterSummary &r : rows) {
    std::snprintf(
        line, sizeof line,
        "%-10s %7zu %9zu %7zu %8zu %11.1f %10.1f %13.1f %11.1f %11zu %7.1f%% %7.1f%% %7.2f\n",
        r.policy.c_str(), r.jobs, r.completed, r.out_of_memory, r.rejected, r.makespan_s,
        r.throughput_jobs_per_hour, r.mean_turnaround_s, r.mean_slurm_wait_s, r.peak_pending,
        100 * r.mean_memory_used, 100 * r.mean_sm_busy, r.wall_s);
    out << line;
  }
}

}  // namespace mgb::sim
