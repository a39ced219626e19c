#include "standin_arena.h"

#include <sys/mman.h>

#include <cstdio>

namespace mgb::runtime {

namespace {
constexpr size_t kAlignment = 256;  // what cudaMalloc guarantees
}

StandInArena::StandInArena(size_t reserve_bytes) : size_(reserve_bytes) {}

StandInArena::~StandInArena() {
  uintptr_t base = base_.load();
  if (base != 0) munmap(reinterpret_cast<void *>(base), size_);
}

size_t StandInArena::Rounded(size_t bytes) {
  if (bytes == 0) bytes = 1;
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

void StandInArena::ReserveOnce() {
  std::call_once(reserved_, [this] {
    void *p = mmap(nullptr, size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      std::fprintf(stderr, "mgb: cannot reserve %zu bytes of address space for stand-ins\n", size_);
      return;
    }
    // Skip the first page so that no stand-in is ever the range's base: a zero offset bug shows.
    uintptr_t base = reinterpret_cast<uintptr_t>(p);
    {
      std::lock_guard lock(mu_);
      free_.emplace(base + kAlignment, size_ - kAlignment);
    }
    base_.store(base, std::memory_order_release);
  });
}

uintptr_t StandInArena::Allocate(size_t bytes) {
  ReserveOnce();
  size_t need = Rounded(bytes);
  std::lock_guard lock(mu_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < need) continue;
    uintptr_t start = it->first;
    size_t left = it->second - need;
    free_.erase(it);
    if (left > 0) free_.emplace(start + need, left);
    return start;
  }
  return 0;
}

void StandInArena::Release(uintptr_t address, size_t bytes) {
  size_t size = Rounded(bytes);
  std::lock_guard lock(mu_);
  auto next = free_.lower_bound(address);
  if (next != free_.end() && address + size == next->first) {
    size += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == address) {
      prev->second += size;
      return;
    }
  }
  free_.emplace(address, size);
}

}  // namespace mgb::runtime
