#include "guarded_driver.h"

#include <cstdio>
#include <string>

namespace mgb::guard {
namespace {

// The pitch the driver may choose for a row of `width` bytes: rows are aligned to at most 512
// bytes on every GPU CUDA 12+ supports, so this bounds what cuMemAllocPitch allocates.
constexpr size_t kMaxPitchAlignment = 512;

// The real function, or CUDA_ERROR_NOT_FOUND when this driver does not have it.
template <typename... Params, typename... Args>
CUresult Call(CUresult (*real)(Params...), Args... args) {
  return real != nullptr ? real(args...) : kCudaErrorNotFound;
}

}  // namespace

template <typename Allocate>
CUresult GuardedDriver::Guarded(size_t bytes, std::unordered_map<uint64_t, uint64_t> &table,
                                const unsigned long long *key, Allocate allocate) {
  if (!Active() || bytes == 0) return allocate();
  std::string why;
  if (!budget_->Admit(bytes, &why)) {
    std::fprintf(stderr,
                 "mgb guard: an allocation of %zu bytes is refused (%s): "
                 "CUDA_ERROR_OUT_OF_MEMORY\n",
                 bytes, why.c_str());
    return kCudaErrorOutOfMemory;
  }
  const CUresult result = allocate();
  if (result != kCudaSuccess) {
    budget_->Release(bytes);
    return result;
  }
  std::lock_guard lock(mu_);
  table[*key] = bytes;
  return result;
}

void GuardedDriver::Forget(std::unordered_map<uint64_t, uint64_t> &table, uint64_t key) {
  if (budget_ == nullptr) return;
  uint64_t bytes = 0;
  {
    std::lock_guard lock(mu_);
    auto it = table.find(key);
    if (it == table.end()) return;  // not counted (made before the guard was active)
    bytes = it->second;
    table.erase(it);
  }
  budget_->Release(bytes);
}

CUresult GuardedDriver::MemAlloc(CUdeviceptr *ptr, size_t bytes) {
  return Guarded(bytes, pointers_, ptr, [&] { return Call(real_.mem_alloc, ptr, bytes); });
}

CUresult GuardedDriver::MemAllocPitch(CUdeviceptr *ptr, size_t *pitch, size_t width, size_t height,
                                      unsigned element_bytes) {
  const size_t bound =
      (width + kMaxPitchAlignment - 1) / kMaxPitchAlignment * kMaxPitchAlignment * height;
  const CUresult result = Guarded(bound, pointers_, ptr, [&] {
    return Call(real_.mem_alloc_pitch, ptr, pitch, width, height, element_bytes);
  });
  if (result == kCudaSuccess && budget_ != nullptr && bound != 0) {
    const uint64_t actual = static_cast<uint64_t>(*pitch) * height;
    if (actual < bound) {  // counted the bound: keep the real size only
      budget_->Release(bound - actual);
      std::lock_guard lock(mu_);
      pointers_[*ptr] = actual;
    }
  }
  return result;
}

CUresult GuardedDriver::MemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned flags) {
  return Guarded(bytes, pointers_, ptr,
                 [&] { return Call(real_.mem_alloc_managed, ptr, bytes, flags); });
}

CUresult GuardedDriver::MemAllocAsync(CUdeviceptr *ptr, size_t bytes, CUstream stream,
                                      bool per_thread) {
  auto *real = per_thread ? real_.mem_alloc_async_ptsz : real_.mem_alloc_async;
  return Guarded(bytes, pointers_, ptr, [&] { return Call(real, ptr, bytes, stream); });
}

CUresult GuardedDriver::MemAllocFromPoolAsync(CUdeviceptr *ptr, size_t bytes, CUmemoryPool pool,
                                              CUstream stream, bool per_thread) {
  auto *real = per_thread ? real_.mem_alloc_from_pool_async_ptsz : real_.mem_alloc_from_pool_async;
  return Guarded(bytes, pointers_, ptr, [&] { return Call(real, ptr, bytes, pool, stream); });
}

CUresult GuardedDriver::MemFree(CUdeviceptr ptr) {
  const CUresult result = Call(real_.mem_free, ptr);
  if (result == kCudaSuccess) Forget(pointers_, ptr);
  return result;
}

CUresult GuardedDriver::MemFreeAsync(CUdeviceptr ptr, CUstream stream, bool per_thread) {
  auto *real = per_thread ? real_.mem_free_async_ptsz : real_.mem_free_async;
  const CUresult result = Call(real, ptr, stream);
  if (result == kCudaSuccess) Forget(pointers_, ptr);
  return result;
}

CUresult GuardedDriver::MemCreate(CUmemGenericAllocationHandle *handle, size_t bytes,
                                  const void *prop, unsigned long long flags) {
  return Guarded(bytes, handles_, handle,
                 [&] { return Call(real_.mem_create, handle, bytes, prop, flags); });
}

CUresult GuardedDriver::MemRelease(CUmemGenericAllocationHandle handle) {
  const CUresult result = Call(real_.mem_release, handle);
  if (result == kCudaSuccess) Forget(handles_, handle);
  return result;
}

CUresult GuardedDriver::MemGetInfo(size_t *free, size_t *total) {
  const CUresult result = Call(real_.mem_get_info, free, total);
  if (result != kCudaSuccess || !Active()) return result;
  if (auto capped = budget_->CappedInfo(*free, *total)) {
    *free = capped->first;
    *total = capped->second;
  }
  return result;
}

}  // namespace mgb::guard
