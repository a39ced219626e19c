// StandInArena: a range of addresses reserved once, at first use, and handed out in pieces.
// Two of them serve libmgb (docs/runtime.md, "Addresses"):
//  - device memory: the range is reserved through CUDA's virtual memory management, so the
//    address the program gets at cudaMalloc is the one its data will have on whichever GPU mgbd
//    chooses (mapped when the task is placed); pieces are multiples of the mapping granularity;
//  - stream and event handles: host addresses reserved with mmap(PROT_NONE), which no host or
//    device allocation can ever share and which fault at once if dereferenced.
// "Is this one of ours?" is one range compare either way.
#ifndef MGB_RUNTIME_SRC_STANDIN_ARENA_H
#define MGB_RUNTIME_SRC_STANDIN_ARENA_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace mgb::runtime {

class StandInArena {
 public:
  // What a reservation gave: its base (0: none could be made) and the alignment of every piece.
  struct Reservation {
    uintptr_t base = 0;
    size_t alignment = 256;
  };
  using Reserve = std::function<Reservation(size_t bytes)>;
  using Unreserve = std::function<void(uintptr_t base, size_t bytes)>;

  // Host addresses (mmap(PROT_NONE)), 256-byte pieces like cudaMalloc's alignment.
  explicit StandInArena(size_t reserve_bytes = size_t{1} << 40);
  // Addresses from `reserve`, given back through `unreserve` when the arena goes.
  StandInArena(size_t reserve_bytes, Reserve reserve, Unreserve unreserve);
  ~StandInArena();
  StandInArena(const StandInArena &) = delete;
  StandInArena &operator=(const StandInArena &) = delete;

  // A fresh range of `bytes` (at least 1) rounded up to Alignment(); 0 when exhausted or when
  // the range could not be reserved.
  uintptr_t Allocate(size_t bytes);
  // Gives a range from Allocate back for reuse.
  void Release(uintptr_t address, size_t bytes);
  // Reserves the range now if not yet done; false when it cannot be reserved.
  bool Reserved();
  // Every piece's alignment (and the unit its size is rounded to); valid once Reserved().
  size_t Alignment() const { return alignment_; }
  size_t Rounded(size_t bytes) const;
  // Lock-free: true for any address inside the reserved range.
  bool Contains(uintptr_t address) const {
    uintptr_t base = base_.load(std::memory_order_acquire);
    return base != 0 && address >= base && address < base + size_;
  }

 private:
  void ReserveOnce();

  size_t size_;
  Reserve reserve_;
  Unreserve unreserve_;
  size_t alignment_ = 256;
  std::atomic<uintptr_t> base_{0};
  std::once_flag reserved_;
  std::mutex mu_;
  std::map<uintptr_t, size_t> free_;  // free ranges by start, coalesced
};

}  // namespace mgb::runtime

#endif  // MGB_RUNTIME_SRC_STANDIN_ARENA_H
