#include "slurm_queue.h"

#include <algorithm>

namespace mgb::sim {

PendingQueue::PendingQueue(size_t positions) {
  while (leaves_ < positions) leaves_ *= 2;
  min_.assign(2 * leaves_, kEmpty);
}

void PendingQueue::Add(size_t position, uint64_t request) {
  Set(position, request);
  ++size_;
}

void PendingQueue::Remove(size_t position) {
  Set(position, kEmpty);
  --size_;
}

void PendingQueue::Set(size_t position, uint64_t value) {
  size_t i = leaves_ + position;
  min_[i] = value;
  for (i /= 2; i >= 1; i /= 2) min_[i] = std::min(min_[2 * i], min_[2 * i + 1]);
}

std::optional<size_t> PendingQueue::OldestAtMost(uint64_t limit) const {
  if (size_ == 0 || min_[1] > limit) return std::nullopt;
  size_t i = 1;
  while (i < leaves_)
    i = min_[2 * i] <= limit ? 2 * i : 2 * i + 1;  // leftmost subtree that has one
  return i - leaves_;
}

}  // namespace mgb::sim
