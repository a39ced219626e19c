// CUDA code in a .cpp file, compiled with `nvcc -x cu`.
#include "buffers.h"
#include <cuda_runtime.h>

__global__ void offset(float *p, int n, float by) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] += by;
}

void offset_on_device(float *p, int n, float by) {
  offset<<<(n + 127) / 128, 128>>>(p, n, by);
  cudaDeviceSynchronize();
}
