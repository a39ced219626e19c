// DriverVmm: the CUDA driver's virtual memory management calls (cuMemAddressReserve, cuMemCreate,
// cuMemMap, cuMemSetAccess and their inverses), reached through the runtime's
// cudaGetDriverEntryPointByVersion so that libmgb needs no -lcuda. Part of the real CudaApi only.
// Measured on an H100 (docs/measurements/vmm-probe-session15): reserving addresses creates no
// context on any GPU; create+map+access costs what cudaMalloc does at every size.
#ifndef MGB_RUNTIME_SRC_DRIVER_VMM_H
#define MGB_RUNTIME_SRC_DRIVER_VMM_H

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace mgb::runtime {

class DriverVmm {
 public:
  // The process's one instance; its entry points are looked up once.
  static DriverVmm &Get();

  cudaError_t Granularity(size_t *bytes);
  cudaError_t Reserve(size_t bytes, size_t alignment, uintptr_t *address);
  cudaError_t Free(uintptr_t address, size_t bytes);
  cudaError_t Create(size_t bytes, int device, uint64_t *handle);
  cudaError_t Release(uint64_t handle);
  cudaError_t Map(uintptr_t address, size_t bytes, uint64_t handle, int device);
  cudaError_t Unmap(uintptr_t address, size_t bytes);

 private:
  DriverVmm();
  struct EntryPoints;
  EntryPoints *entry_;  // null when the driver lacks any of them
};

}  // namespace mgb::runtime

#endif  // MGB_RUNTIME_SRC_DRIVER_VMM_H
