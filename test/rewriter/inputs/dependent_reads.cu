// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/dependent_reads.cu | FileCheck %s
// RUN: %golden %t %s
// Found on third-party code (HeCBench scan, tensorAccessor). In a function template a call with
// a dependent argument stays unresolved: `cudaMemcpy(d_in, in, bytes, ...)` on a `T *` has no
// implicit cast around `bytes`, which looked like a write between the two cudaMalloc(..., bytes)
// and made the task lazy. Every candidate takes the size by value: a read. A const variable whose
// address is taken (`&rows` to a `const long *` parameter) is never written either.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

template <typename T>
__global__ void copyRows(T *out, const T *in, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i];
}

struct Shape {
  long extent;
  explicit Shape(const long *rows) : extent(*rows) {}
};

// CHECK-LABEL: void run(long n)
template <typename T>
void run(long n) {
  long bytes = n * sizeof(T);
  T *in = (T *)calloc(n, sizeof(T));
  T *d_in, *d_out;
  // CHECK: {{^ *}}mgb_task mgb_task_{{[0-9]+}} = mgb_task_begin((size_t)(bytes) + (size_t)(bytes), mgb_dim((dim3((n + 255) / 256))), mgb_dim(256)
  cudaMalloc((void **)&d_in, bytes);
  cudaMemcpy(d_in, in, bytes, cudaMemcpyHostToDevice);
  cudaMalloc((void **)&d_out, bytes);
  // CHECK-NOT: mgb_prepare
  dim3 grid((n + 255) / 256);
  copyRows<T><<<grid, 256>>>(d_out, d_in, n);
  cudaMemcpy(in, d_out, bytes, cudaMemcpyDeviceToHost);
  cudaFree(d_in);
  cudaFree(d_out);
  // CHECK: mgb_task_end(
  free(in);
}

// CHECK-LABEL: int main()
int main() {
  const long rows = 1000;
  float *d;
  // CHECK: mgb_task_begin((size_t)(rows * sizeof(float)), mgb_dim((dim3((rows + 127) / 128))), mgb_dim(128)
  cudaMalloc(&d, rows * sizeof(float));
  Shape shape(&rows);
  dim3 grid((rows + 127) / 128);
  // CHECK-NOT: mgb_prepare
  copyRows<float><<<grid, 128>>>(d, d, shape.extent);
  cudaFree(d);
  // CHECK: mgb_task_end(
  run<float>(rows);
  return 0;
}
