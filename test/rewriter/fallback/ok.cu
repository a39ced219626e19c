// A translation unit clang parses: rewritten as usual, also when compiled in one nvcc command with
// vla_init.cu, which cannot be (test: rewriter.driver_fallback).
#include <cuda_runtime.h>

__global__ void scale(float *x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= a;
}

float scale_sum(float *d, int n, float a) {
  scale<<<(n + 255) / 256, 256>>>(d, n, a);
  return cudaDeviceSynchronize() == cudaSuccess ? 0.0f : -1.0f;
}
