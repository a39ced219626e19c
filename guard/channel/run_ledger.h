// RunLedger: the counters `mgb run` shares with the guard in every process of its program, in a
// small file both map (a file by path, not an inherited descriptor: programs that close their
// descriptors, as Python's subprocess does, keep it). The guard updates `allocated` and `peak`
// without asking anyone; only `mgb run` raises `reserved` (after mgbd granted a grow). A run of
// several GPUs (`mgb run --gpus N`) counts each GPU apart, by its CUDA ordinal in the program.
#ifndef MGB_GUARD_CHANNEL_RUN_LEDGER_H
#define MGB_GUARD_CHANNEL_RUN_LEDGER_H

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mgb::guard {

// The most GPUs one run may have (`mgb run --gpus N`).
inline constexpr size_t kMaxRunGpus = 8;

// What one of the program's processes holds: counted out when it exits, however it exits (its
// driver context, and so its memory, goes with it). `pid` 0: free; `start`: the process's start
// time (/proc/PID/stat), so that a reused pid is not taken for the process that had it.
struct ProcessSlot {
  std::atomic<uint64_t> pid{0};
  std::atomic<uint64_t> start{0};
  std::atomic<uint64_t> allocated[kMaxRunGpus] = {};  // per GPU of the run
};

// One GPU of the run.
struct GpuCounters {
  std::atomic<uint64_t> reserved{0};   // bytes mgbd granted the run there
  std::atomic<uint64_t> allocated{0};  // bytes the program's processes hold there now
  std::atomic<uint64_t> peak{0};       // the most they held there at once
  // The most the run could hold there now (mgbd's TaskUsage answer, set by `mgb run`): what
  // cuMemGetInfo may call free (0: not known yet).
  std::atomic<uint64_t> room{0};
};

// The layout in the file. Plain atomics of 8 bytes are lock-free, so they work across processes.
struct LedgerCounters {
  static constexpr uint64_t kMagic = 0x3352474c42474d;  // "MGBLGR3"
  static constexpr size_t kSlots =
      1024;  // processes of a run counted one by one; more: in `allocated` only
  uint64_t magic = 0;
  uint64_t gpus = 1;  // the run's GPUs, 1..kMaxRunGpus: CUDA ordinals 0..gpus-1 in the program
  GpuCounters gpu[kMaxRunGpus];
  std::atomic<uint64_t> cap{0};       // --max-mem per GPU (0: none)
  std::atomic<uint64_t> guarded{0};   // processes in which the guard became active
  std::atomic<uint64_t> refusals{0};  // allocations answered CUDA_ERROR_OUT_OF_MEMORY
  std::atomic<uint64_t> reaped{0};    // bytes counted out for processes that exited holding them
  std::atomic<uint64_t> spilled{0};   // bytes given as host memory after a kNoRoom grow (guard)
  ProcessSlot slots[kSlots];
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);

class RunLedger {
 public:
  // `mgb run`'s side: creates DIR/ledger (mode 0600) with the reservation on each GPU of the run
  // (1..kMaxRunGpus of them) and the cap. Both return null with *error set on failure. (No
  // Abseil here: the guard is loaded into programs that may carry their own.)
  static std::unique_ptr<RunLedger> Create(const std::string &dir,
                                           const std::vector<uint64_t> &reserved, uint64_t cap,
                                           std::string *error);
  // The guard's side: maps an existing DIR/ledger.
  static std::unique_ptr<RunLedger> Open(const std::string &dir, std::string *error);
  ~RunLedger();
  RunLedger(const RunLedger &) = delete;
  RunLedger &operator=(const RunLedger &) = delete;

  LedgerCounters &counters() { return *counters_; }

 private:
  explicit RunLedger(LedgerCounters *counters) : counters_(counters) {}
  LedgerCounters *counters_;
};

// The start time of live process `pid` (clock ticks since boot, /proc/PID/stat); 0 when it is
// gone or a zombie (its memory is freed).
uint64_t ProcessStartTime(int64_t pid);

// A free slot for the calling process, claimed; null when all are taken.
ProcessSlot *ClaimSlot(LedgerCounters &counters);

// Counts out what exited processes held: their slots' bytes leave `allocated` and the slots are
// freed. Any process of the run (or `mgb run`) may call it; each slot is reaped once. Returns the
// bytes counted out.
uint64_t ReapExited(LedgerCounters &counters);

// Takes `bytes` off an atomic, never below 0.
void SubtractFrom(std::atomic<uint64_t> &counter, uint64_t bytes);

// Raises an atomic to at least `value` (peak, reserved).
inline void RaiseTo(std::atomic<uint64_t> &counter, uint64_t value) {
  uint64_t seen = counter.load(std::memory_order_relaxed);
  while (seen < value && !counter.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

}  // namespace mgb::guard

#endif  // MGB_GUARD_CHANNEL_RUN_LEDGER_H
