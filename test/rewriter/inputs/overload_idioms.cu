// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/overload_idioms.cu | FileCheck %s
// RUN: %golden %t %s
// Overloads nvcc resolves that round 14's pools use (the CUDA Handbook's programs): each made the
// rewrite fail to compile where the original builds.
#include <cstdio>
#include <cuda_runtime.h>

// cuda_runtime.h's C++ overload cudaEventCreate(event, flags): its twin takes the flags too.
// CHECK-LABEL: float timed(float *d, int n)
float timed(float *d, int n) {
  cudaEvent_t start, stop;
  // CHECK: mgb_cudaEventCreate(&start, cudaEventBlockingSync);
  cudaEventCreate(&start, cudaEventBlockingSync);
  // CHECK: mgb_cudaEventCreate(&stop);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  cudaMemset(d, 0, n * sizeof(float));
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms;
}

// A kernel template and a host function template of one name (the host one launches the
// kernel): `(const void *)scatter<T, K>` cannot pick one, so the prepare names no kernel.
template <typename T, int K>
__global__ void scatter(T **out, const T *in, size_t n) {
  size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[K][i] = in[i];
}

// CHECK-LABEL: void scatter(T **out, const T *in, size_t n, int blocks, int threads)
template <typename T, int K>
void scatter(T **out, const T *in, size_t n, int blocks, int threads) {
  // CHECK: mgb_prepare(mgb_dim(blocks), mgb_dim(threads), (const void *)nullptr, "overload_idioms.cu:{{[0-9]+}}", out, in);
  scatter<T, K><<<blocks, threads>>>(out, in, n);
}

int main() {
  float *d = nullptr;
  cudaMalloc(&d, 64 * sizeof(float));
  printf("%s\n", timed(d, 64) >= 0 ? "timed" : "not timed");
  float **rows = nullptr;
  cudaMalloc(&rows, sizeof(float *));
  cudaMemcpy(rows, &d, sizeof(float *), cudaMemcpyHostToDevice);
  float *in = nullptr;
  cudaMalloc(&in, 64 * sizeof(float));
  cudaMemset(in, 0, 64 * sizeof(float));
  scatter<float, 0>(rows, in, 64, 1, 64);
  float h = 1;
  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%g\n", h);
  cudaFree(in);
  cudaFree(rows);
  cudaFree(d);
  return 0;
}
