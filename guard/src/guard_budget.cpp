#include "guard_budget.h"

#include <pthread.h>

#include <algorithm>
#include <cstdio>

namespace mgb::guard {

bool GuardBudget::Admit(uint64_t bytes, std::string *why) {
  while (true) {
    uint64_t allocated = counters_.allocated.load(std::memory_order_relaxed);
    const uint64_t reserved = counters_.reserved.load(std::memory_order_acquire);
    if (allocated + bytes <= reserved || Unguarded()) {
      if (counters_.allocated.compare_exchange_weak(allocated, allocated + bytes,
                                                    std::memory_order_relaxed)) {
        RaiseTo(counters_.peak, allocated + bytes);
        if (ProcessSlot *slot = Slot()) slot->allocated.fetch_add(bytes, std::memory_order_relaxed);
        return true;
      }
      continue;
    }
    std::lock_guard lock(grow_mu_);
    // Processes that exited holding memory hold it no more: perhaps no grow is needed.
    if (ReapExited(counters_) > 0) continue;
    // Another thread may have grown it (or freed) while this one waited for the lock.
    allocated = counters_.allocated.load(std::memory_order_relaxed);
    const uint64_t now_reserved = counters_.reserved.load(std::memory_order_acquire);
    if (allocated + bytes <= now_reserved) continue;
    const GrowAnswer answer = ask_(allocated + bytes - now_reserved);
    switch (answer.verdict) {
      case GrowAnswer::kGranted:
        continue;  // `mgb run` raised the ledger's reservation before answering
      case GrowAnswer::kUnavailable:
        if (unmanaged_allowed_) {
          std::fprintf(stderr, "mgb guard: %s; running unguarded (MGB_UNMANAGED is set)\n",
                       answer.message.c_str());
          unguarded_ = true;
          continue;
        }
        [[fallthrough]];
      case GrowAnswer::kRefused:
        counters_.refusals.fetch_add(1, std::memory_order_relaxed);
        *why = answer.message;
        return false;
    }
  }
}

void GuardBudget::Release(uint64_t bytes) {
  if (ProcessSlot *slot = Slot()) SubtractFrom(slot->allocated, bytes);
  SubtractFrom(counters_.allocated, bytes);
}

namespace {

// Forks this process made, counted in each child (pthread_atfork): a child sees one more than
// its parent did, and so claims a slot of its own; allocations need no getpid() and no lock.
std::atomic<uint64_t> g_forks{0};

void CountFork() { g_forks.fetch_add(1, std::memory_order_relaxed); }

}  // namespace

ProcessSlot *GuardBudget::Slot() {
  static std::once_flag registered;
  std::call_once(registered, [] { pthread_atfork(nullptr, nullptr, CountFork); });
  const uint64_t current = g_forks.load(std::memory_order_relaxed) + 1;
  if (slot_forks_.load(std::memory_order_acquire) == current) {
    return slot_.load(std::memory_order_relaxed);
  }
  // The first allocation, or the first in a forked child.
  std::lock_guard lock(slot_mu_);
  if (slot_forks_.load(std::memory_order_relaxed) != current) {
    slot_.store(ClaimSlot(counters_), std::memory_order_relaxed);
    slot_forks_.store(current, std::memory_order_release);
  }
  return slot_.load(std::memory_order_relaxed);
}

std::optional<std::pair<size_t, size_t>> GuardBudget::CappedInfo(size_t free, size_t total) const {
  const uint64_t cap = counters_.cap.load(std::memory_order_relaxed);
  if (cap == 0) return std::nullopt;
  const uint64_t allocated = counters_.allocated.load(std::memory_order_relaxed);
  const uint64_t left = cap > allocated ? cap - allocated : 0;
  return std::make_pair(static_cast<size_t>(std::min<uint64_t>(free, left)),
                        static_cast<size_t>(std::min<uint64_t>(total, cap)));
}

}  // namespace mgb::guard
