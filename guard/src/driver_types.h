// The few CUDA driver types the guard's entry points use, declared here rather than from cuda.h:
// cuda.h renames entry points by macro (cuMemAlloc -> cuMemAlloc_v2, cuGetProcAddress ->
// cuGetProcAddress_v2), which would rename the guard's own definitions, and the guard's logic is
// tested on machines without the driver. The ABI (integers and opaque pointers) is CUDA's.
#ifndef MGB_GUARD_SRC_DRIVER_TYPES_H
#define MGB_GUARD_SRC_DRIVER_TYPES_H

#include <cstddef>
#include <cstdint>

namespace mgb::guard {

using CUresult = int;
using CUdeviceptr = unsigned long long;
using CUmemGenericAllocationHandle = unsigned long long;
using CUstream = void *;
using CUmemoryPool = void *;
using cuuint64_t = uint64_t;

inline constexpr CUresult kCudaSuccess = 0;
inline constexpr CUresult kCudaErrorOutOfMemory = 2;  // CUDA_ERROR_OUT_OF_MEMORY
inline constexpr CUresult kCudaErrorNotFound = 500;   // CUDA_ERROR_NOT_FOUND

// The real driver's allocation entry points (their versioned names in comments). A null member
// is a function this driver does not have: GuardedDriver answers a call to it CUDA_ERROR_NOT_FOUND
// (a program linked with -lcuda against a newer driver than the one it runs on).
struct RealDriver {
  CUresult (*mem_alloc)(CUdeviceptr *, size_t) = nullptr;                                    // _v2
  CUresult (*mem_free)(CUdeviceptr) = nullptr;                                               // _v2
  CUresult (*mem_alloc_pitch)(CUdeviceptr *, size_t *, size_t, size_t, unsigned) = nullptr;  // _v2
  CUresult (*mem_alloc_managed)(CUdeviceptr *, size_t, unsigned) = nullptr;
  CUresult (*mem_alloc_async)(CUdeviceptr *, size_t, CUstream) = nullptr;
  CUresult (*mem_alloc_async_ptsz)(CUdeviceptr *, size_t, CUstream) = nullptr;
  CUresult (*mem_alloc_from_pool_async)(CUdeviceptr *, size_t, CUmemoryPool, CUstream) = nullptr;
  CUresult (*mem_alloc_from_pool_async_ptsz)(CUdeviceptr *, size_t, CUmemoryPool,
                                             CUstream) = nullptr;
  CUresult (*mem_free_async)(CUdeviceptr, CUstream) = nullptr;
  CUresult (*mem_free_async_ptsz)(CUdeviceptr, CUstream) = nullptr;
  CUresult (*mem_create)(CUmemGenericAllocationHandle *, size_t, const void *,
                         unsigned long long) = nullptr;
  CUresult (*mem_release)(CUmemGenericAllocationHandle) = nullptr;
  CUresult (*mem_get_info)(size_t *, size_t *) = nullptr;  // _v2
};

}  // namespace mgb::guard

#endif  // MGB_GUARD_SRC_DRIVER_TYPES_H
