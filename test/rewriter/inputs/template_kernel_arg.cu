// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/template_kernel_arg.cu | FileCheck %s
// RUN: %golden %t %s
// Found on third-party code (SHOC Scan style): in a function template, a launch of a template
// kernel passes the grid variable also as a kernel argument (`k<T, 256><<<nb, nt>>>(d, nb)`).
// With dependent types the argument has no implicit cast around it; it is still only read (kernel
// arguments are copied), so the task stays static and its shape is the variable's value.
#include <cstdio>
#include <cuda_runtime.h>

template <class T, int blockSize>
__global__ void partial(const T *in, T *sums, int n) {
  if (threadIdx.x == 0)
    sums[blockIdx.x] = in[blockIdx.x % n];
}

template <class T, int blockSize>
__global__ void single(T *sums, int n) {
  if (threadIdx.x == 0)
    for (int i = 1; i < n; i++)
      sums[i] += sums[i - 1];
}

// CHECK-LABEL: T runScan(int n, int iters)
template <class T>
T runScan(int n, int iters) {
  int numBlocks = 64;
  int numThreads = 256;
  T *in, *sums;
  T last = 0;
  // CHECK: {{^ *}}mgb_task mgb_task_{{[0-9]+}} = mgb_task_begin((size_t)(n * sizeof(T)) + (size_t)(numBlocks * sizeof(T)), mgb_dim(numBlocks), mgb_dim(numThreads), (const void *)partial<T, 256>
  cudaMalloc((void **)&in, n * sizeof(T));
  cudaMalloc((void **)&sums, numBlocks * sizeof(T));
  cudaMemset(in, 0, n * sizeof(T));
  for (int j = 0; j < iters; j++) {
    // CHECK-NOT: mgb_prepare
    partial<T, 256><<<numBlocks, numThreads>>>(in, sums, n);
    single<T, 256><<<1, numThreads>>>(sums, numBlocks);
  }
  cudaMemcpy(&last, sums + numBlocks - 1, sizeof(T), cudaMemcpyDeviceToHost);
  cudaFree(in);
  cudaFree(sums);
  // CHECK: {{^ *}}mgb_task_end(
  return last;
}

int main() {
  printf("%f %d\n", runScan<float>(1 << 16, 2), runScan<int>(1 << 16, 2));
  return 0;
}
