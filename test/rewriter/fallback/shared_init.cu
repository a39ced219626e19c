// A translation unit nvcc compiles and clang 19 cannot parse: a __shared__ variable of a class
// type with a default member initializer (the pattern of `__shared__ cuda::barrier<...> bar;`).
// nvcc accepts it; clang: "initialization is not supported for __shared__ variables". mgb-nvcc
// must compile it as written, loudly, with -include mgb/unseen_tu.h (test: rewriter.driver_fallback).
#include <cstdio>
#include <cuda_runtime.h>

struct Accumulator {
  float sum = 0.0f;
};

__global__ void block_sum(const float *x, int n, float *out) {
  __shared__ Accumulator acc;
  if (threadIdx.x == 0)
    acc.sum = 0.0f;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    atomicAdd(&acc.sum, x[i]);
  __syncthreads();
  if (threadIdx.x == 0)
    *out = acc.sum;
}

float scale_sum(float *d, int n, float a); // ok.cu

int main() {
  const int n = 1024;
  float *d, *out, sum = 0;
  cudaMalloc(&d, n * sizeof(float));
  cudaMalloc(&out, sizeof(float));
  cudaMemset(d, 0, n * sizeof(float));
  block_sum<<<1, 256>>>(d, n, out);
  cudaMemcpy(&sum, out, sizeof(float), cudaMemcpyDeviceToHost);
  sum += scale_sum(d, n, 2.0f);
  cudaFree(d);
  cudaFree(out);
  std::printf("%g\n", sum);
  return 0;
}
