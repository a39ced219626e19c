// A translation unit nvcc compiles and clang 19 reports an error in device code only: a
// __shared__ variable of a class type with a default member initializer (the pattern of
// `__shared__ cuda::barrier<...> bar;`); clang: "initialization is not supported for __shared__
// variables". An error inside a device-only function does not fail the host parse: mgb-nvcc
// rewrites it, silently (test: rewriter.driver_fallback; before, it was compiled as written).
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

int main() {
  const int n = 1024;
  float *d, *out, sum = 0;
  cudaMalloc(&d, n * sizeof(float));
  cudaMalloc(&out, sizeof(float));
  cudaMemset(d, 0, n * sizeof(float));
  block_sum<<<1, 256>>>(d, n, out);
  cudaMemcpy(&sum, out, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  cudaFree(out);
  std::printf("%g\n", sum);
  return 0;
}
