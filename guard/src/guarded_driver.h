// GuardedDriver: the driver's allocation entry points with the guard around them. Each counts what
// it allocates in the budget before asking the real driver, un-counts it on failure and on free;
// cuMemGetInfo reports what the program may still use (GuardBudget::CappedInfo). Without a budget
// (no `mgb run` around the program) every call goes straight to the driver.
// Spill (docs/frameworks.md): when the budget says kSpill, cuMemAlloc gets host memory mapped at a
// reserved device address (cuMemCreate on the host, cuMemMap, cuMemSetAccess for the device) and
// cuMemCreate a host-located handle; the program reads and writes it at PCIe speed instead of
// dying of out-of-memory. Other entry points have no spill and answer out-of-memory.
#ifndef MGB_GUARD_SRC_GUARDED_DRIVER_H
#define MGB_GUARD_SRC_GUARDED_DRIVER_H

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
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
  // Admits `bytes`, runs `allocate`, and records the result under `key` in `table`; when the
  // budget says spill, runs `spill` instead (null: out-of-memory), recorded in spilled_.
  struct Counted {
    uint64_t bytes = 0;
    uint32_t gpu = 0;  // the run's GPU it counts on
  };
  using Table = std::unordered_map<uint64_t, Counted>;
  template <typename Allocate, typename Spill>
  CUresult Guarded(size_t bytes, uint32_t gpu, Table &table, const unsigned long long *key,
                   Allocate allocate, Spill spill);
  void Forget(Table &table, uint64_t key);
  // Takes `key`'s entry out of `table` under mu_; none when it has none.
  template <typename Value>
  std::optional<Value> Take(std::unordered_map<uint64_t, Value> &table, uint64_t key);
  // The run's GPU an allocation now counts on.
  uint32_t CurrentGpu() const;
  // Host memory mapped for the current device at a new address, as cuMemAlloc's stand-in.
  CUresult SpillAlloc(CUdeviceptr *ptr, size_t bytes);
  // Frees a SpillAlloc'd address (true), or false when `ptr` is not one.
  bool SpillFree(CUdeviceptr ptr, CUresult *result);
  // A spilled handle released: its bytes leave the spill count (true), or false if not one.
  bool ForgetSpilledHandle(CUmemGenericAllocationHandle handle);

  RealDriver real_;
  GuardBudget *budget_;
  std::atomic<bool> disabled_{false};
  std::mutex mu_;
  Table pointers_;  // device address -> what is counted
  Table handles_;   // cuMemCreate handle -> what is counted
  struct SpilledAddress {
    size_t size = 0;  // reserved and mapped (granularity-rounded)
    CUmemGenericAllocationHandle handle = 0;
    size_t bytes = 0;  // asked for: what the spill count holds
  };
  std::unordered_map<uint64_t, SpilledAddress> spilled_pointers_;  // SpillAlloc's
  std::unordered_map<uint64_t, uint64_t> spilled_handles_;  // host handles made for cuMemCreate
};

}  // namespace mgb::guard

#endif  // MGB_GUARD_SRC_GUARDED_DRIVER_H
