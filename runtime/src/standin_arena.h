// StandInArena: the address range stand-ins come from. It is reserved with mmap(PROT_NONE) at
// first use, so no host allocation and no CUDA (UVA) device allocation can ever get an address
// inside it: "is this a stand-in?" is one range compare, and a stand-in dereferenced by mistake on
// the host faults at once instead of corrupting memory.
#ifndef MGB_RUNTIME_SRC_STANDIN_ARENA_H
#define MGB_RUNTIME_SRC_STANDIN_ARENA_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace mgb::runtime {

class StandInArena {
 public:
  explicit StandInArena(size_t reserve_bytes = size_t{1} << 40);
  ~StandInArena();
  StandInArena(const StandInArena &) = delete;
  StandInArena &operator=(const StandInArena &) = delete;

  // A fresh range of `bytes` (at least 1), 256-byte aligned like cudaMalloc; 0 when exhausted.
  uintptr_t Allocate(size_t bytes);
  // Gives a range from Allocate back for reuse.
  void Release(uintptr_t address, size_t bytes);
  // Lock-free: true for any address inside the reserved range.
  bool Contains(uintptr_t address) const {
    uintptr_t base = base_.load(std::memory_order_acquire);
    return base != 0 && address >= base && address < base + size_;
  }

 private:
  static size_t Rounded(size_t bytes);
  void ReserveOnce();

  size_t size_;
  std::atomic<uintptr_t> base_{0};
  std::once_flag reserved_;
  std::mutex mu_;
  std::map<uintptr_t, size_t> free_;  // free ranges by start, coalesced
};

}  // namespace mgb::runtime

#endif  // MGB_RUNTIME_SRC_STANDIN_ARENA_H
