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
  using Ask = std::function<GrowAnswer(uint64_t missing_bytes, uint32_t gpu)>;
  // unmanaged_allowed: MGB_UNMANAGED is set, so when `mgb run` cannot be asked the program goes
  // on unguarded (one warning) instead of getting out-of-memory. spill_allowed: a grow refused
  // for now (GrowAnswer::kNoRoom) may be served from host memory (GuardedDriver) instead.
  GuardBudget(LedgerCounters &counters, Ask ask, bool unmanaged_allowed, bool spill_allowed = false)
      : counters_(counters),
        ask_(std::move(ask)),
        unmanaged_allowed_(unmanaged_allowed),
        spill_allowed_(spill_allowed) {}

  enum class Admission {
    kAdmitted,  // counted: allocate on the device
    kRefused,   // never (or not without waiting forever, spill off): out-of-memory; *why says so
    kSpill,     // not on the device now: allocate in host memory, counted by Spilled
  };
  // Counts `bytes` as allocated on the run's GPU `gpu` (CUDA ordinal; 0 in a one-GPU run) once
  // they fit its reservation there (growing it when needed).
  Admission Admit(uint64_t bytes, uint32_t gpu, std::string *why);
  // Host memory given in place of device memory (kSpill), made (+) or freed (-). Returns the
  // spilled bytes before.
  uint64_t Spilled(int64_t bytes);
  // Un-counts bytes freed (or admitted for an allocation that then failed).
  void Release(uint64_t bytes, uint32_t gpu);
  // (free, total) on `gpu` as the program may see them (nullopt: as the driver says).
  std::optional<std::pair<size_t, size_t>> CappedInfo(size_t free, size_t total,
                                                      uint32_t gpu) const;
  // GPUs the run has: allocations are counted by device only when more than one.
  uint32_t gpus() const { return static_cast<uint32_t>(counters_.gpus); }
  bool Unguarded() const { return unguarded_.load(std::memory_order_relaxed); }

 private:
  LedgerCounters &counters_;
  Ask ask_;
  const bool unmanaged_allowed_;
  const bool spill_allowed_;
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
