// GuardBudget: admits each allocation against the run's reservation (the shared ledger) and, past
// it, asks `mgb run` to grow it first, waiting as libmgb's guard waits for mgbd. Allocations that
// fit cost a few atomic operations; only a grow talks to another process. Each process counts
// its bytes in a slot of its own too (run_ledger.h), so that what a process held is counted out
// once it exits, killed or not: before a grow is asked for, and by `mgb run` as it watches.
#ifndef MGB_GUARD_SRC_GUARD_BUDGET_H
#define MGB_GUARD_SRC_GUARD_BUDGET_H

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "grow_channel.h"
#include "run_ledger.h"

namespace mgb::guard {

class GuardBudget {
 public:
  using Ask = std::function<GrowAnswer(uint64_t missing_bytes)>;
  // unmanaged_allowed: MGB_UNMANAGED is set, so when `mgb run` cannot be asked the program goes
  // on unguarded (one warning) instead of getting out-of-memory.
  GuardBudget(LedgerCounters &counters, Ask ask, bool unmanaged_allowed)
      : counters_(counters), ask_(std::move(ask)), unmanaged_allowed_(unmanaged_allowed) {}

  // Counts `bytes` as allocated once they fit the reservation (growing it when needed). False:
  // they never will; *why says so.
  bool Admit(uint64_t bytes, std::string *why);
  // Un-counts bytes freed (or admitted for an allocation that then failed).
  void Release(uint64_t bytes);
  // (free, total) as the program may see them: the cap bounds both (nullopt: no cap).
  std::optional<std::pair<size_t, size_t>> CappedInfo(size_t free, size_t total) const;
  bool Unguarded() const { return unguarded_.load(std::memory_order_relaxed); }

 private:
  LedgerCounters &counters_;
  Ask ask_;
  const bool unmanaged_allowed_;
  // This process's slot (claimed at its first allocation; again in a forked child), or null.
  ProcessSlot *Slot();

  std::mutex grow_mu_;  // one grow at a time per process: the others then fit or ask again
  std::atomic<bool> unguarded_{false};
  std::mutex slot_mu_;  // claiming only: allocations read the two atomics below
  std::atomic<ProcessSlot *> slot_{nullptr};
  std::atomic<uint64_t> slot_forks_{0};  // 1 + the forks counted when slot_ was claimed; 0: none
};

}  // namespace mgb::guard

#endif  // MGB_GUARD_SRC_GUARD_BUDGET_H
