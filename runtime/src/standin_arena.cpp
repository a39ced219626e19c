#include "standin_arena.h"

#include <sys/mman.h>

#include <cstdio>

namespace mgb::runtime {

namespace {

StandInArena::Reservation HostReservation(size_t bytes) {
  void *p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::fprintf(stderr, "mgb: cannot reserve %zu bytes of address space for handles\n", bytes);
    return {};
  }
  return {reinterpret_cast<uintptr_t>(p), 256};  // 256: what cudaMalloc guarantees
}

}  // namespace

StandInArena::StandInArena(size_t reserve_bytes)
    : StandInArena(reserve_bytes, HostReservation, [](uintptr_t base, size_t bytes) {
        munmap(reinterpret_cast<void *>(base), bytes);
      }) {}

StandInArena::StandInArena(size_t reserve_bytes, Reserve reserve, Unreserve unreserve)
    : size_(reserve_bytes), reserve_(std::move(reserve)), unreserve_(std::move(unreserve)) {}

StandInArena::~StandInArena() {
  uintptr_t base = base_.load();
  if (base != 0) unreserve_(base, size_);
}

size_t StandInArena::Rounded(size_t bytes) const {
  if (bytes == 0) bytes = 1;
  return (bytes + alignment_ - 1) / alignment_ * alignment_;
}

void StandInArena::ReserveOnce() {
  std::call_once(reserved_, [this] {
    Reservation reservation = reserve_(size_);
    if (reservation.base == 0 || reservation.alignment == 0 || reservation.alignment * 2 > size_) {
      return;
    }
    alignment_ = reservation.alignment;
    // Skip the first piece so that no range handed out is the reservation's base: a zero offset
    // bug shows.
    {
      std::lock_guard lock(mu_);
      free_.emplace(reservation.base + alignment_, size_ - alignment_);
    }
    base_.store(reservation.base, std::memory_order_release);
  });
}

bool StandInArena::Reserved() {
  ReserveOnce();
  return base_.load(std::memory_order_acquire) != 0;
}

uintptr_t StandInArena::Allocate(size_t bytes) {
  if (!Reserved()) return 0;
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
