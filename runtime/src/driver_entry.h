// The CUDA driver's calls libmgb makes, reached through the runtime's
// cudaGetDriverEntryPointByVersion so that libmgb needs no -lcuda. Part of the real CudaApi only.
#ifndef MGB_RUNTIME_SRC_DRIVER_ENTRY_H
#define MGB_RUNTIME_SRC_DRIVER_ENTRY_H

#include <cuda_runtime_api.h>

namespace mgb::runtime {

// The ABI the prototypes libmgb uses have had since CUDA 10.2; asking by version keeps it fixed.
inline constexpr unsigned kDriverAbi = 12000;

// Sets *fn to the driver's NAME; false (and *fn unusable) when the driver lacks it.
template <class F>
bool LoadDriverEntry(const char *name, F *fn) {
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cudaError_t error = cudaGetDriverEntryPointByVersion(name, reinterpret_cast<void **>(fn),
                                                       kDriverAbi, cudaEnableDefault, &found);
  return error == cudaSuccess && found == cudaDriverEntryPointSuccess && *fn != nullptr;
}

}  // namespace mgb::runtime

#endif  // MGB_RUNTIME_SRC_DRIVER_ENTRY_H
