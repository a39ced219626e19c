// A cluster of identical nodes behind Slurm: jobs are submitted to Slurm's queue at their arrival
// time; Slurm grants each a node by its GRES request (slurm_select.h, FIFO with skip:
// slurm_queue.h); on the node, a NodeSimulation runs it under mgbd's real core. One event loop
// advances every node, so Slurm sees each job end (completion or crash) when it happens and
// reuses its grant at once.
#ifndef MGB_TOOLS_SIM_CLUSTER_SIMULATOR_H
#define MGB_TOOLS_SIM_CLUSTER_SIMULATOR_H

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster_policy.h"
#include "job_profile.h"
#include "simulator.h"

namespace mgb::sim {

struct ClusterOptions {
  size_t nodes = 1;
  // Every node alike: its GPUs, context cost, slowdown model, utilisation samples. Its core
  // policy comes from `policy`; its workers are ignored (Slurm alone admits jobs to a node).
  SimOptions node;
  ClusterPolicy policy;
};

struct ClusterResult {
  // As for one node, over the whole cluster: jobs in trace order (started_s = when Slurm started
  // the job on its node), GPUs named n<node>.g<gpu> and numbered node * gpus_per_node + gpu.
  // A job asking more than a node has is refused at submission (rejected, as sbatch would).
  SimResult run;
  std::vector<int> job_node;           // per job; -1 when Slurm refused it
  uint64_t gres_per_node = 0;          // a node's GRES total (bytes, GPUs or shards)
  std::vector<uint64_t> peak_granted;  // per node, the most Slurm had granted at once
  size_t peak_pending = 0;             // the longest Slurm queue
};

// Fails (INVALID_ARGUMENT) on an empty trace, no nodes or no GPUs.
absl::StatusOr<ClusterResult> SimulateCluster(const Trace &trace, const ClusterOptions &options);

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_CLUSTER_SIMULATOR_H
