// The figures of a cluster run, one row per cluster policy: throughput (completed jobs per hour of
// makespan, batch's definition), mean turnaround of the COMPLETED jobs (end minus submission to
// Slurm; batch's own mean also counts crashed jobs), crashed and refused jobs, mean GPU memory
// held, and how long the simulation itself took.
#ifndef MGB_TOOLS_SIM_CLUSTER_REPORT_H
#define MGB_TOOLS_SIM_CLUSTER_REPORT_H

#include <ostream>
#include <string>
#include <vector>

#include "cluster_simulator.h"

namespace mgb::sim {

struct ClusterSummary {
  std::string policy;
  size_t jobs = 0;
  size_t completed = 0;
  size_t out_of_memory = 0;  // crashed
  size_t rejected = 0;       // refused by Slurm or by mgbd's core
  double makespan_s = 0.0;
  double throughput_jobs_per_hour = 0.0;
  double mean_turnaround_s = 0.0;  // completed jobs
  double mean_slurm_wait_s = 0.0;  // submission to start on a node, started jobs
  double mean_memory_used = 0.0;   // over GPUs and the makespan, share of capacity
  double mean_sm_busy = 0.0;
  size_t peak_pending = 0;
  double wall_s = 0.0;  // the simulation's own run time
};

ClusterSummary SummariseCluster(const ClusterResult &result, double wall_s);

void PrintClusterTable(const std::vector<ClusterSummary> &rows, std::ostream &out);

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_CLUSTER_REPORT_H
