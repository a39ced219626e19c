#include "cluster_policy.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"

namespace mgb::sim {

std::string ClusterPolicy::Name() const {
  switch (kind) {
    case Kind::kMgb: return "mgb";
    case Kind::kWholeGpu: return "whole-gpu";
    case Kind::kShard: return "shard:" + std::to_string(shards_per_gpu);
  }
  return "unknown";
}

core::Policy ClusterPolicy::NodePolicy() const {
  core::Policy policy;
  switch (kind) {
    case Kind::kMgb: policy.kind = core::PolicyKind::kMgb; break;
    case Kind::kWholeGpu: policy.kind = core::PolicyKind::kSingle; break;
    case Kind::kShard:
      policy.kind = core::PolicyKind::kCoreToGpu;
      policy.sessions_per_gpu = shards_per_gpu;
      break;
  }
  return policy;
}

uint64_t ClusterPolicy::NodeTotal(const std::vector<core::GpuSpec> &gpus) const {
  if (kind == Kind::kMgb) {
    uint64_t total = 0;
    for (const core::GpuSpec &g : gpus) total += g.memory_bytes;
    return total;
  }
  return gpus.size() * (kind == Kind::kShard ? shards_per_gpu : 1);
}

uint64_t ClusterPolicy::JobRequest(const JobProfile &job, uint64_t context_bytes) const {
  if (kind != Kind::kMgb) return 1;
  // The job's peak as a user would measure it (nvidia-smi counts the context too).
  uint64_t peak = 0;
  for (const TaskProfile &task : job.tasks)
    peak = std::max({peak, task.memory_bytes, task.PeakMemory()});
  return peak + context_bytes;
}

absl::StatusOr<ClusterPolicy> ParseClusterPolicy(const std::string &text) {
  ClusterPolicy policy;
  if (text == "mgb") return policy;
  if (text == "whole-gpu") {
    policy.kind = ClusterPolicy::Kind::kWholeGpu;
    return policy;
  }
  if (absl::StartsWith(text, "shard:") &&
      absl::SimpleAtoi(text.substr(6), &policy.shards_per_gpu) && policy.shards_per_gpu >= 1) {
    policy.kind = ClusterPolicy::Kind::kShard;
    return policy;
  }
  return absl::InvalidArgumentError("unknown cluster policy \"" + text +
                                    "\" (valid: mgb, whole-gpu, shard:S with S >= 1)");
}

}  // namespace mgb::sim
