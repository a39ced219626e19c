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
using CUdevice = int;

// CUmemLocation, CUmemAllocationProp and CUmemAccessDesc as cuda.h lays them out.
struct MemLocation {
  int type = 0;  // CU_MEM_LOCATION_TYPE_*
  int id = 0;
};
inline constexpr int kMemLocationDevice = 1;  // CU_MEM_LOCATION_TYPE_DEVICE
inline constexpr int kMemLocationHost = 2;    // CU_MEM_LOCATION_TYPE_HOST
struct MemAllocationProp {
  int type = 1;  // CU_MEM_ALLOCATION_TYPE_PINNED
  int requested_handle_types = 0;
  MemLocation location;
  void *win32_handle_meta_data = nullptr;
  unsigned char compression_type = 0;
  unsigned char gpu_direct_rdma_capable = 0;
  unsigned short usage = 0;
  unsigned char reserved[4] = {};
};
static_assert(sizeof(MemAllocationProp) == 32);
struct MemAccessDesc {
  MemLocation location;
  int flags = 3;  // CU_MEM_ACCESS_FLAGS_PROT_READWRITE
};

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
  // Not wrapped: what a spill (host memory mapped for the device) is made with.
  CUresult (*mem_address_reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
                                  unsigned long long) = nullptr;
  CUresult (*mem_address_free)(CUdeviceptr, size_t) = nullptr;
  CUresult (*mem_map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                      unsigned long long) = nullptr;
  CUresult (*mem_unmap)(CUdeviceptr, size_t) = nullptr;
  CUresult (*mem_set_access)(CUdeviceptr, size_t, const MemAccessDesc *, size_t) = nullptr;
  CUresult (*ctx_get_device)(CUdevice *) = nullptr;
};

}  // namespace mgb::guard

#endif  // MGB_GUARD_SRC_DRIVER_TYPES_H
