// GuardedDriver: the driver's allocation entry points with the guard around them. Each counts what
// it allocates in the budget before asking the real driver, un-counts it on failure and on free;
// cuMemGetInfo reports what the program may still use under its cap. Without a budget (no
// `mgb run` around the program) every call goes straight to the driver.
#ifndef MGB_GUARD_SRC_GUARDED_DRIVER_H
#define MGB_GUARD_SRC_GUARDED_DRIVER_H

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "driver_types.h"
#include "guard_budget.h"

namespace mgb::guard {

class GuardedDriver {
 public:
  GuardedDriver(const RealDriver &real, GuardBudget *budget) : real_(real), budget_(budget) {}

  CUresult MemAlloc(CUdeviceptr *ptr, size_t bytes);
  CUresult MemAllocPitch(CUdeviceptr *ptr, size_t *pitch, size_t width, size_t height,
                         unsigned element_bytes);
  CUresult MemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned flags);
  CUresult MemAllocAsync(CUdeviceptr *ptr, size_t bytes, CUstream stream, bool per_thread);
  CUresult MemAllocFromPoolAsync(CUdeviceptr *ptr, size_t bytes, CUmemoryPool pool, CUstream stream,
                                 bool per_thread);
  CUresult MemFree(CUdeviceptr ptr);
  CUresult MemFreeAsync(CUdeviceptr ptr, CUstream stream, bool per_thread);
  CUresult MemCreate(CUmemGenericAllocationHandle *handle, size_t bytes, const void *prop,
                     unsigned long long flags);
  CUresult MemRelease(CUmemGenericAllocationHandle handle);
  CUresult MemGetInfo(size_t *free, size_t *total);

  const RealDriver &real() const { return real_; }
  bool Active() const {
    return budget_ != nullptr && !budget_->Unguarded() &&
           !disabled_.load(std::memory_order_relaxed);
  }
  // From now on every call goes straight to the driver (libmgb manages the program's memory).
  void Disable() { disabled_ = true; }

 private:
  // Admits `bytes`, runs `allocate`, and records the result under `key` in `table`.
  template <typename Allocate>
  CUresult Guarded(size_t bytes, std::unordered_map<uint64_t, uint64_t> &table,
                   const unsigned long long *key, Allocate allocate);
  void Forget(std::unordered_map<uint64_t, uint64_t> &table, uint64_t key);

  RealDriver real_;
  GuardBudget *budget_;
  std::atomic<bool> disabled_{false};
  std::mutex mu_;
  std::unordered_map<uint64_t, uint64_t> pointers_;  // device address -> bytes counted
  std::unordered_map<uint64_t, uint64_t> handles_;   // cuMemCreate handle -> bytes counted
};

}  // namespace mgb::guard

#endif  // MGB_GUARD_SRC_GUARDED_DRIVER_H
