// WaitingIndex: the wait queue's backfilling index. It answers "the oldest waiting task after
// position P whose keys (memory, warps) are all within these limits" in about O(log n), so a
// release does not walk (and Choose for) every waiting task that cannot fit anywhere.
//
// A segment tree over queue slots holds, per node, the minimum of each key in its range; a range
// whose minimum of some key is above its limit is skipped whole. Slots are assigned in queue
// order; removed slots keep their position (keys set to "never") until the slot array is full,
// then live entries are compacted, so memory stays proportional to the queue, not to history.
// An entry added ahead of others (queue priority) is inserted in order and the tree rebuilt.
#ifndef MGB_SERVICE_CORE_MGB_CORE_WAITING_INDEX_H
#define MGB_SERVICE_CORE_MGB_CORE_WAITING_INDEX_H

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace mgb::core {

class WaitingIndex {
 public:
  static constexpr size_t kKeys = 2;
  using Keys = std::array<uint64_t, kKeys>;
  struct Entry {
    uint64_t seq = 0;
    uint64_t id = 0;
  };

  // `seq` must differ from every live entry's. In arrival order (larger than every seq added
  // before) it costs about O(log n); an earlier one (a queue priority placing it ahead of tasks
  // already waiting) is inserted in order and the tree rebuilt, O(n).
  void Add(uint64_t seq, uint64_t id, const Keys &keys) {
    if (!slots_.empty() && seq < slots_.back().seq) {
      std::erase_if(slots_, [](const Slot &s) { return !s.live; });
      slots_.insert(slots_.begin() + static_cast<std::ptrdiff_t>(SlotOf(seq)),
                    Slot{seq, id, keys, true});
      ++live_;
      Rebuild();
      return;
    }
    if (slots_.size() == capacity_) Grow();
    const size_t slot = slots_.size();
    slots_.push_back(Slot{seq, id, keys, true});
    ++live_;
    Set(slot, keys);
  }

  // False if no live entry has this seq.
  bool Remove(uint64_t seq) {
    const size_t slot = SlotOf(seq);
    if (slot == slots_.size() || slots_[slot].seq != seq || !slots_[slot].live) return false;
    slots_[slot].live = false;
    --live_;
    Set(slot, kNever);
    return true;
  }

  // The live entry with the smallest seq > `after` whose every key is <= its limit.
  std::optional<Entry> FirstAfter(uint64_t after, const Keys &limits) const {
    if (live_ == 0) return std::nullopt;
    const size_t start = std::upper_bound(slots_.begin(), slots_.end(), after,
                                          [](uint64_t s, const Slot &x) { return s < x.seq; }) -
                         slots_.begin();
    const size_t slot = Find(1, 0, capacity_, start, limits);
    if (slot == kNone) return std::nullopt;
    return Entry{slots_[slot].seq, slots_[slot].id};
  }

  size_t size() const { return live_; }

 private:
  struct Slot {
    uint64_t seq;
    uint64_t id;
    Keys keys;
    bool live;
  };
  static constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  static constexpr Keys kNever = {kMax, kMax};
  static constexpr size_t kNone = std::numeric_limits<size_t>::max();

  static bool Within(const Keys &keys, const Keys &limits) {
    for (size_t k = 0; k < kKeys; ++k) {
      if (keys[k] > limits[k]) return false;
    }
    return true;
  }

  size_t SlotOf(uint64_t seq) const {
    return std::lower_bound(slots_.begin(), slots_.end(), seq,
                            [](const Slot &x, uint64_t s) { return x.seq < s; }) -
           slots_.begin();
  }

  void Set(size_t slot, const Keys &keys) {
    size_t node = capacity_ + slot;
    tree_[node] = keys;
    for (node /= 2; node >= 1; node /= 2) {
      for (size_t k = 0; k < kKeys; ++k) {
        tree_[node][k] = std::min(tree_[2 * node][k], tree_[2 * node + 1][k]);
      }
    }
  }

  // The first slot >= start in [lo, hi) (the range of `node`) whose keys are within the limits.
  size_t Find(size_t node, size_t lo, size_t hi, size_t start, const Keys &limits) const {
    if (hi <= start || !Within(tree_[node], limits)) return kNone;
    if (hi - lo == 1) return lo;
    const size_t mid = (lo + hi) / 2;
    const size_t left = Find(2 * node, lo, mid, start, limits);
    return left != kNone ? left : Find(2 * node + 1, mid, hi, start, limits);
  }

  // Full: drop removed slots, and double the capacity if more than half are live.
  void Grow() {
    std::erase_if(slots_, [](const Slot &s) { return !s.live; });
    Rebuild();
  }

  // The tree from slots_ (all live), with room for twice as many.
  void Rebuild() {
    while (capacity_ < 2 * std::max<size_t>(slots_.size(), 8)) capacity_ *= 2;
    tree_.assign(2 * capacity_, kNever);
    for (size_t i = 0; i < slots_.size(); ++i) tree_[capacity_ + i] = slots_[i].keys;
    for (size_t node = capacity_ - 1; node >= 1; --node) {
      for (size_t k = 0; k < kKeys; ++k) {
        tree_[node][k] = std::min(tree_[2 * node][k], tree_[2 * node + 1][k]);
      }
    }
  }

  size_t capacity_ = 1;  // leaves, a power of two; slots_.size() <= capacity_
  std::vector<Slot> slots_;
  std::vector<Keys> tree_ = std::vector<Keys>(2, kNever);
  size_t live_ = 0;
};

}  // namespace mgb::core

#endif  // MGB_SERVICE_CORE_MGB_CORE_WAITING_INDEX_H
