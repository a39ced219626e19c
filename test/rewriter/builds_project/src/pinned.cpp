// Host code that calls the runtime, compiled by $(NVCC) as a .cpp (nvcc hands it to its host
// compiler as C++): rewritten as mgb-c++ would rewrite it.
#include <cuda_runtime.h>

#include "gpu.h"

#ifndef FROM_MGB_NVCC
#error "the flags in MGB_NVCC (the real compiler's value) were not used"
#endif
#ifndef __NVCC__
#error "nvcc defines __NVCC__ for host sources too: the rewrite's parse must see it"
#endif

float *gpu_staging(int n) {
  float *p = nullptr;
  if (cudaMalloc(reinterpret_cast<void **>(&p), n * sizeof(float)) != cudaSuccess) return nullptr;
  return p;
}
