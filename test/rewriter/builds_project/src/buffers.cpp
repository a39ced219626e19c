// C++11 host code that calls the runtime itself (rewritten by mgb-c++, compiled at -std=c++11).
#include <cuda_runtime.h>

#include "gpu.h"

#ifndef FROM_MGB_CXX
#error "the flags in MGB_CXX (the real compiler's value) were not used"
#endif

float *gpu_scratch(int n) {
  float *p = nullptr;
  if (cudaMalloc(reinterpret_cast<void **>(&p), n * sizeof(float)) != cudaSuccess) return nullptr;
  return p;
}

void gpu_scratch_release(float *p) {
  cudaDeviceSynchronize();
  cudaFree(p);
}
