// Slurm's pending jobs, served FIFO with skip: a scheduling pass walks the queue in submission
// order and starts every job that fits some node now; a job that fits nowhere is skipped, not
// waited for (no reservation for the head, unlike Slurm's backfill, which needs time limits the
// profiles do not have). A pass that starts nothing must stay cheap at 100,000 pending jobs, so
// the queue answers "the oldest job asking at most X" from a segment tree of minima over
// submission positions, in O(log n).
#ifndef MGB_TOOLS_SIM_SLURM_QUEUE_H
#define MGB_TOOLS_SIM_SLURM_QUEUE_H

#include <cstdint>
#include <optional>
#include <vector>

namespace mgb::sim {

class PendingQueue {
 public:
  // Positions 0..positions-1 (submission order); all empty.
  explicit PendingQueue(size_t positions);

  void Add(size_t position, uint64_t request);
  void Remove(size_t position);
  // The lowest position whose request is <= limit.
  std::optional<size_t> OldestAtMost(uint64_t limit) const;
  size_t size() const { return size_; }

 private:
  static constexpr uint64_t kEmpty = UINT64_MAX;
  void Set(size_t position, uint64_t value);

  size_t leaves_ = 1;          // a power of two >= positions
  std::vector<uint64_t> min_;  // heap layout: node i has children 2i and 2i+1; leaves at leaves_
  size_t size_ = 0;
};

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_SLURM_QUEUE_H
