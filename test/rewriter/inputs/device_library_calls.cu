// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --allow-empty
// RUN: %strip-checks %t/first/device_library_calls.cu | FileCheck %s
// RUN: %golden %t %s
// CHECK-MESSAGES-NOT: warning
// Found on third-party code (HeCBench dropout, accuracy): kernels call cuRAND's device API and
// cub's block-wide primitives. That is the program's own kernel work, placed with its task; only
// host calls into a CUDA library (cublasCreate below) run kernels mgb cannot see and are reported.
#include <cstdio>
#include <cublas_v2.h>
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <curand_kernel.h>

template <typename T>
__device__ void blockSum(T &value) {
  typedef cub::BlockReduce<T, 128> Reduce;
  __shared__ typename Reduce::TempStorage storage;
  value = Reduce(storage).Sum(value);
}

__global__ void noise(float *out, unsigned long long seed, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t state;
  curand_init(seed, i, 0, &state);
  float v = i < n ? curand_uniform(&state) : 0.f;
  blockSum(v);
  __syncthreads();
  if (threadIdx.x == 0)
    out[blockIdx.x] = v;
}

// CHECK-LABEL: int main()
int main() {
  const int n = 1 << 12;
  float *d;
  // CHECK: mgb_task_begin((size_t)(n / 128 * sizeof(float)), mgb_dim(n / 128), mgb_dim(128), (const void *)noise
  cudaMalloc(&d, n / 128 * sizeof(float));
  noise<<<n / 128, 128>>>(d, 1234ULL, n);
  float first = 0;
  cudaMemcpy(&first, d, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  // CHECK: mgb_task_end(
  printf("%f\n", first);
  cublasHandle_t handle;
  cublasCreate(&handle);
  cublasDestroy(handle);
  return 0;
}
