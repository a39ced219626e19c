#include "guard_budget.h"

#include <pthread.h>

#include <algorithm>
#include <cstdio>

namespace mgb::guard {
namespace {
std::string GiB(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  return text;
}
}  // namespace

GuardBudget::Admission GuardBudget::Admit(uint64_t bytes, uint32_t gpu, std::string *why) {
  if (gpu >= counters_.gpus) {  // a GPU the run was not given (CUDA_VISIBLE_DEVICES prevents it)
    *why = "CUDA device " + std::to_string(gpu) + " is not one of the run's";
    return Admission::kRefused;
  }
  GpuCounters &g = counters_.gpu[gpu];
  while (true) {
    uint64_t allocated = g.allocated.load(std::memory_order_relaxed);
    const uint64_t reserved = g.reserved.load(std::memory_order_acquire);
    // --max-mem bounds what the run holds, whatever it was granted: a first grant from a learned
    // peak may be larger than the cap.
    const uint64_t cap = counters_.cap.load(std::memory_order_relaxed);
    if (cap != 0 && allocated + bytes > cap && !Unguarded()) {
      counters_.refusals.fetch_add(1, std::memory_order_relaxed);
      *why = "the run would hold " + GiB(allocated + bytes) + ", past --max-mem " + GiB(cap);
      return Admission::kRefused;
    }
    if (allocated + bytes <= reserved || Unguarded()) {
      if (g.allocated.compare_exchange_weak(allocated, allocated + bytes,
                                            std::memory_order_relaxed)) {
        RaiseTo(g.peak, allocated + bytes);
        if (ProcessSlot *slot = Slot()) {
          slot->allocated[gpu].fetch_add(bytes, std::memory_order_relaxed);
        }
        return Admission::kAdmitted;
      }
      continue;
    }
    std::lock_guard lock(grow_mu_);
    // Processes that exited holding memory hold it no more: perhaps no grow is needed.
    if (ReapExited(counters_) > 0) continue;
    // Another thread may have grown it (or freed) while this one waited for the lock.
    allocated = g.allocated.load(std::memory_order_relaxed);
    const uint64_t now_reserved = g.reserved.load(std::memory_order_acquire);
    if (allocated + bytes <= now_reserved) continue;
    const GrowAnswer answer = ask_(allocated + bytes - now_reserved, gpu);
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
        break;
      case GrowAnswer::kNoRoom:
        if (spill_allowed_) {
          *why = answer.message;
          return Admission::kSpill;
        }
        break;
      case GrowAnswer::kRefused: break;
    }
    counters_.refusals.fetch_add(1, std::memory_order_relaxed);
    *why = answer.message;
    return Admission::kRefused;
  }
}

uint64_t GuardBudget::Spilled(int64_t bytes) {
  if (bytes >= 0) {
    return counters_.spilled.fetch_add(static_cast<uint64_t>(bytes), std::memory_order_relaxed);
  }
  const uint64_t before = counters_.spilled.load(std::memory_order_relaxed);
  SubtractFrom(counters_.spilled, static_cast<uint64_t>(-bytes));
  return before;
}

void GuardBudget::Release(uint64_t bytes, uint32_t gpu) {
  if (gpu >= counters_.gpus) return;
  if (ProcessSlot *slot = Slot()) SubtractFrom(slot->allocated[gpu], bytes);
  SubtractFrom(counters_.gpu[gpu].allocated, bytes);
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

// The rule (docs/frameworks.md, "What cuMemGetInfo says"): total is the GPU's, or --max-mem;
// free is what the run could still allocate without waiting: at most the cap less what it holds,
// and at most the room mgbd last said the run has on its GPU (its reservation plus what no one
// there has reserved) less what it holds.
std::optional<std::pair<size_t, size_t>> GuardBudget::CappedInfo(size_t free, size_t total,
                                                                 uint32_t gpu) const {
  if (gpu >= counters_.gpus) return std::nullopt;
  const GpuCounters &g = counters_.gpu[gpu];
  const uint64_t cap = counters_.cap.load(std::memory_order_relaxed);
  const uint64_t room = g.room.load(std::memory_order_relaxed);
  if (cap == 0 && room == 0) return std::nullopt;
  const uint64_t allocated = g.allocated.load(std::memory_order_relaxed);
  uint64_t left = free;
  if (cap != 0) left = std::min(left, cap > allocated ? cap - allocated : 0);
  if (room != 0) left = std::min(left, room > allocated ? room - allocated : 0);
  return std::make_pair(static_cast<size_t>(left),
                        static_cast<size_t>(cap != 0 ? std::min<uint64_t>(total, cap) : total));
}

}  // namespace mgb::guard
