#include "slurm_select.h"

#include <algorithm>
#include <cassert>

namespace mgb::sim {

std::optional<size_t> GresPool::FirstFit(uint64_t request) const {
  for (size_t n = 0; n < granted_.size(); ++n) {
    if (per_node_ - granted_[n] >= request) return n;
  }
  return std::nullopt;
}

uint64_t GresPool::MostFree() const {
  uint64_t most = 0;
  for (uint64_t g : granted_) most = std::max(most, per_node_ - g);
  return most;
}

void GresPool::Grant(size_t node, uint64_t count) {
  assert(per_node_ - granted_[node] >= count);
  granted_[node] += count;
  peak_[node] = std::max(peak_[node], granted_[node]);
}

void GresPool::Release(size_t node, uint64_t count) {
  assert(granted_[node] >= count);
  granted_[node] -= count;
}

}  // namespace mgb::sim
