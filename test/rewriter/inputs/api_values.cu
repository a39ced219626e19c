// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/api_values.cu | FileCheck %s
// RUN: %golden %t %s
// Found while checking third-party patterns (RAII ownership of device memory): CUDA runtime
// functions named as values, not called: cudaFree as a std::unique_ptr deleter (`&cudaFree`, in
// decltype too), passed as a function pointer, stored in a variable. Each is renamed to its mgb_
// twin (same C signature), else memory that mgb_cudaMalloc allocated would be freed behind
// libmgb's back. Calls are renamed as before; a user's own function of another name is untouched.
#include <cstdio>
#include <memory>
#include <cuda_runtime.h>

__global__ void fill(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = 1.0f;
}

float *deviceAlloc(int n) {
  float *p = nullptr;
  // CHECK: mgb_cudaMalloc(&p, n * sizeof(float));
  cudaMalloc(&p, n * sizeof(float));
  return p;
}

typedef cudaError_t (*FreeFn)(void *);

void release(float *p, FreeFn f) { f(p); }

int main() {
  const int n = 1024;
  // CHECK: std::unique_ptr<float, decltype(&mgb_cudaFree)> x(deviceAlloc(n), &mgb_cudaFree);
  std::unique_ptr<float, decltype(&cudaFree)> x(deviceAlloc(n), &cudaFree);
  // CHECK: std::unique_ptr<float, FreeFn> y(deviceAlloc(n), mgb_cudaFree);
  std::unique_ptr<float, FreeFn> y(deviceAlloc(n), cudaFree);
  // CHECK: FreeFn f = (mgb_cudaFree);
  FreeFn f = (cudaFree);
  // CHECK: mgb_prepare(
  fill<<<(n + 255) / 256, 256>>>(x.get(), n);
  float h[4];
  // CHECK: mgb_cudaMemcpy(h, x.get(), sizeof(h), cudaMemcpyDeviceToHost);
  cudaMemcpy(h, x.get(), sizeof(h), cudaMemcpyDeviceToHost);
  // CHECK: release(deviceAlloc(n), mgb_cudaFree);
  release(deviceAlloc(n), cudaFree);
  // CHECK: f(deviceAlloc(n));
  f(deviceAlloc(n));
  printf("%f\n", h[0]);
  return 0;
}
