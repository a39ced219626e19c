// CUDA in a .cpp, compiled by `$(NVCC) -c src/scale.cpp -x cu`: nvcc's -x applies to inputs
// before it too. C++14 (a generic lambda on the host).
#include <cuda_runtime.h>

#include "gpu.h"

#ifndef FROM_MGB_NVCC
#error "the flags in MGB_NVCC (mgb-nvcc's real compiler) were not used"
#endif

__global__ void scale(float *p, int n, float f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= f;
}

void gpu_scale(float *p, int n, float f) {
  auto blocks = [](auto count) { return (count + 127) / 128; };
  scale<<<blocks(n), 128>>>(p, n, f);
}
