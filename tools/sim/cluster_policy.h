// How a cluster shares its GPUs: what Slurm counts per node and per job, and which policy mgbd's
// core runs on every node.
//   mgb        --gres=gpumem:<peak>: a node's total is the sum of its GPUs' memory, a job asks
//              its peak plus one CUDA context; mgbd (policy mgb) places each task on a GPU where
//              it fits, else queues it: never an out-of-memory.
//   whole-gpu  --gres=gpu:1: a job owns one GPU (core policy single); no sharing.
//   shard:S    --gres=shard:1 with S shards per GPU and no memory enforcement: up to S jobs per
//              GPU (core policy cg:S, memory-blind); memory is physical, so a job whose
//              allocation takes its GPU past capacity dies of out-of-memory.
#ifndef MGB_TOOLS_SIM_CLUSTER_POLICY_H
#define MGB_TOOLS_SIM_CLUSTER_POLICY_H

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "job_profile.h"
#include "mgb/core/scheduler.h"

namespace mgb::sim {

struct ClusterPolicy {
  enum class Kind { kMgb, kWholeGpu, kShard };
  Kind kind = Kind::kMgb;
  uint32_t shards_per_gpu = 0;  // shard:S only

  std::string Name() const;
  // The policy of mgbd's core on every node.
  core::Policy NodePolicy() const;
  // The GRES count of a node of `gpus`.
  uint64_t NodeTotal(const std::vector<core::GpuSpec> &gpus) const;
  // What a job asks Slurm for; `context_bytes`: what one CUDA context really costs.
  uint64_t JobRequest(const JobProfile &job, uint64_t context_bytes) const;
};

// "mgb", "whole-gpu", "shard:S" (S >= 1); the error lists the valid names.
absl::StatusOr<ClusterPolicy> ParseClusterPolicy(const std::string &text);

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_CLUSTER_POLICY_H
