#include "guarded_driver.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

namespace mgb::guard {
namespace {

// The pitch the driver may choose for a row of `width` bytes: rows are aligned to at most 512
// bytes on every GPU CUDA 12+ supports, so this bounds what cuMemAllocPitch allocates.
constexpr size_t kMaxPitchAlignment = 512;
// Host memory for the device comes in 2 MiB pieces (cuMemGetAllocationGranularity, H100).
constexpr size_t kSpillGranularity = size_t{2} << 20;

// The real function, or CUDA_ERROR_NOT_FOUND when this driver does not have it.
template <typename... Params, typename... Args>
CUresult Call(CUresult (*real)(Params...), Args... args) {
  return real != nullptr ? real(args...) : kCudaErrorNotFound;
}

}  // namespace

template <typename Allocate, typename Spill>
CUresult GuardedDriver::Guarded(size_t bytes, uint32_t gpu, Table &table,
                                const unsigned long long *key, Allocate allocate, Spill spill) {
  if (!Active() || bytes == 0) return allocate();
  std::string why;
  switch (budget_->Admit(bytes, gpu, &why)) {
    case GuardBudget::Admission::kAdmitted: break;
    case GuardBudget::Admission::kSpill:
      if constexpr (!std::is_same_v<Spill, std::nullptr_t>) {
        const CUresult spilled = spill();
        if (spilled == kCudaSuccess) {
          // Said for the first spill and each further GiB, not for every allocation.
          const uint64_t before = budget_->Spilled(static_cast<int64_t>(bytes));
          if (before == 0 || (before >> 30) != ((before + bytes) >> 30)) {
            std::fprintf(stderr,
                         "mgb guard: %zu bytes more in host memory, %.1f GiB in all (%s): the "
                         "program runs on, slower where it uses them\n",
                         bytes, static_cast<double>(before + bytes) / (1 << 30), why.c_str());
          }
          return spilled;
        }
      }
      [[fallthrough]];
    case GuardBudget::Admission::kRefused:
      std::fprintf(stderr,
                   "mgb guard: an allocation of %zu bytes is refused (%s): "
                   "CUDA_ERROR_OUT_OF_MEMORY\n",
                   bytes, why.c_str());
      return kCudaErrorOutOfMemory;
  }
  const CUresult result = allocate();
  if (result != kCudaSuccess) {
    budget_->Release(bytes, gpu);
    return result;
  }
  std::lock_guard lock(mu_);
  table[*key] = Counted{bytes, gpu};
  return result;
}

template <typename Value>
std::optional<Value> GuardedDriver::Take(std::unordered_map<uint64_t, Value> &table, uint64_t key) {
  std::lock_guard lock(mu_);
  auto it = table.find(key);
  if (it == table.end()) return std::nullopt;
  Value value = it->second;
  table.erase(it);
  return value;
}

void GuardedDriver::Forget(Table &table, uint64_t key) {
  if (budget_ == nullptr) return;
  // Not in the table: not counted (made before the guard was active).
  if (std::optional<Counted> counted = Take(table, key)) {
    budget_->Release(counted->bytes, counted->gpu);
  }
}

uint32_t GuardedDriver::CurrentGpu() const {
  // One GPU: nothing to ask. Several: the calling thread's current device, by CUDA ordinal in the
  // program (CUDA_VISIBLE_DEVICES lists the run's GPUs in the ledger's order).
  if (budget_ == nullptr || budget_->gpus() <= 1 || real_.ctx_get_device == nullptr) return 0;
  CUdevice device = 0;
  if (real_.ctx_get_device(&device) != kCudaSuccess || device < 0) return 0;
  return static_cast<uint32_t>(device);
}

CUresult GuardedDriver::MemAlloc(CUdeviceptr *ptr, size_t bytes) {
  return Guarded(
      bytes, CurrentGpu(), pointers_, ptr, [&] { return Call(real_.mem_alloc, ptr, bytes); },
      [&] { return SpillAlloc(ptr, bytes); });
}

CUresult GuardedDriver::SpillAlloc(CUdeviceptr *ptr, size_t bytes) {
  const RealDriver &r = real_;
  if (r.mem_create == nullptr || r.mem_address_reserve == nullptr || r.mem_map == nullptr ||
      r.mem_set_access == nullptr || r.ctx_get_device == nullptr || r.mem_unmap == nullptr ||
      r.mem_address_free == nullptr) {
    return kCudaErrorNotFound;
  }
  CUdevice device = 0;
  if (const CUresult e = r.ctx_get_device(&device); e != kCudaSuccess) return e;
  const size_t size = (bytes + kSpillGranularity - 1) / kSpillGranularity * kSpillGranularity;
  MemAllocationProp prop;
  prop.location = {kMemLocationHost, 0};
  CUmemGenericAllocationHandle handle = 0;
  if (const CUresult e = r.mem_create(&handle, size, &prop, 0); e != kCudaSuccess) return e;
  CUdeviceptr address = 0;
  CUresult e = r.mem_address_reserve(&address, size, kSpillGranularity, 0, 0);
  if (e == kCudaSuccess) {
    e = r.mem_map(address, size, 0, handle, 0);
    if (e == kCudaSuccess) {
      MemAccessDesc access;
      access.location = {kMemLocationDevice, device};
      e = r.mem_set_access(address, size, &access, 1);
      if (e != kCudaSuccess) r.mem_unmap(address, size);
    }
    if (e != kCudaSuccess) r.mem_address_free(address, size);
  }
  if (e != kCudaSuccess) {
    Call(real_.mem_release, handle);
    return e;
  }
  *ptr = address;
  std::lock_guard lock(mu_);
  spilled_pointers_[address] = SpilledAddress{size, handle, bytes};
  return kCudaSuccess;
}

bool GuardedDriver::SpillFree(CUdeviceptr ptr, CUresult *result) {
  const std::optional<SpilledAddress> spilled = Take(spilled_pointers_, ptr);
  if (!spilled) return false;
  *result = real_.mem_unmap(ptr, spilled->size);
  real_.mem_address_free(ptr, spilled->size);
  Call(real_.mem_release, spilled->handle);
  if (budget_ != nullptr) budget_->Spilled(-static_cast<int64_t>(spilled->bytes));
  return true;
}

CUresult GuardedDriver::MemAllocPitch(CUdeviceptr *ptr, size_t *pitch, size_t width, size_t height,
                                      unsigned element_bytes) {
  const size_t bound =
      (width + kMaxPitchAlignment - 1) / kMaxPitchAlignment * kMaxPitchAlignment * height;
  const uint32_t gpu = CurrentGpu();
  const CUresult result = Guarded(
      bound, gpu, pointers_, ptr,
      [&] { return Call(real_.mem_alloc_pitch, ptr, pitch, width, height, element_bytes); },
      nullptr);
  if (result == kCudaSuccess && budget_ != nullptr && bound != 0) {
    const uint64_t actual = static_cast<uint64_t>(*pitch) * height;
    if (actual < bound) {  // counted the bound: keep the real size only
      budget_->Release(bound - actual, gpu);
      std::lock_guard lock(mu_);
      pointers_[*ptr] = Counted{actual, gpu};
    }
  }
  return result;
}

CUresult GuardedDriver::MemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned flags) {
  return Guarded(
      bytes, CurrentGpu(), pointers_, ptr,
      [&] { return Call(real_.mem_alloc_managed, ptr, bytes, flags); }, nullptr);
}

CUresult GuardedDriver::MemAllocAsync(CUdeviceptr *ptr, size_t bytes, CUstream stream,
                                      bool per_thread) {
  auto *real = per_thread ? real_.mem_alloc_async_ptsz : real_.mem_alloc_async;
  return Guarded(
      bytes, CurrentGpu(), pointers_, ptr, [&] { return Call(real, ptr, bytes, stream); }, nullptr);
}

CUresult GuardedDriver::MemAllocFromPoolAsync(CUdeviceptr *ptr, size_t bytes, CUmemoryPool pool,
                                              CUstream stream, bool per_thread) {
  auto *real = per_thread ? real_.mem_alloc_from_pool_async_ptsz : real_.mem_alloc_from_pool_async;
  return Guarded(
      bytes, CurrentGpu(), pointers_, ptr, [&] { return Call(real, ptr, bytes, pool, stream); },
      nullptr);
}

CUresult GuardedDriver::MemFree(CUdeviceptr ptr) {
  if (CUresult spilled; SpillFree(ptr, &spilled)) return spilled;
  const CUresult result = Call(real_.mem_free, ptr);
  if (result == kCudaSuccess) Forget(pointers_, ptr);
  return result;
}

CUresult GuardedDriver::MemFreeAsync(CUdeviceptr ptr, CUstream stream, bool per_thread) {
  auto *real = per_thread ? real_.mem_free_async_ptsz : real_.mem_free_async;
  // A spill is freed at once: the program synchronises before it reuses what it freed, and a
  // kernel still reading it would read unmapped memory either way.
  if (CUresult spilled; SpillFree(ptr, &spilled)) return spilled;
  const CUresult result = Call(real, ptr, stream);
  if (result == kCudaSuccess) Forget(pointers_, ptr);
  return result;
}

CUresult GuardedDriver::MemCreate(CUmemGenericAllocationHandle *handle, size_t bytes,
                                  const void *prop, unsigned long long flags) {
  // Physical memory on a device names it; host-located memory is not the GPU's (counted on the
  // current one all the same, as it was before runs had several GPUs).
  MemAllocationProp asked;
  if (prop != nullptr) std::memcpy(&asked, prop, sizeof asked);
  const bool on_device = prop != nullptr && asked.location.type == kMemLocationDevice;
  uint32_t gpu = CurrentGpu();
  if (on_device && asked.location.id >= 0 && budget_ != nullptr && budget_->gpus() > 1) {
    gpu = static_cast<uint32_t>(asked.location.id);
  }
  return Guarded(
      bytes, gpu, handles_, handle,
      [&] { return Call(real_.mem_create, handle, bytes, prop, flags); },
      [&] {
        // The same allocation on the host: the program maps it and grants its device access as
        // it would have (cuMemSetAccess works on host-located memory, measured on H100).
        if (!on_device) return kCudaErrorOutOfMemory;
        MemAllocationProp host = asked;
        host.location = {kMemLocationHost, 0};
        host.compression_type = 0;
        const CUresult e = Call(real_.mem_create, handle, bytes, &host, flags);
        if (e == kCudaSuccess) {
          std::lock_guard lock(mu_);
          spilled_handles_[*handle] = bytes;
        }
        return e;
      });
}

bool GuardedDriver::ForgetSpilledHandle(CUmemGenericAllocationHandle handle) {
  const std::optional<uint64_t> bytes = Take(spilled_handles_, handle);
  if (!bytes) return false;
  if (budget_ != nullptr) budget_->Spilled(-static_cast<int64_t>(*bytes));
  return true;
}

CUresult GuardedDriver::MemRelease(CUmemGenericAllocationHandle handle) {
  const CUresult result = Call(real_.mem_release, handle);
  if (result == kCudaSuccess && !ForgetSpilledHandle(handle)) Forget(handles_, handle);
  return result;
}

CUresult GuardedDriver::MemGetInfo(size_t *free, size_t *total) {
  const CUresult result = Call(real_.mem_get_info, free, total);
  if (result != kCudaSuccess || !Active()) return result;
  if (auto capped = budget_->CappedInfo(*free, *total, CurrentGpu())) {
    *free = capped->first;
    *total = capped->second;
  }
  return result;
}

}  // namespace mgb::guard
