// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/late_shape.cu | FileCheck %s
// RUN: %golden %t %s
// Found on third-party code (cuda-samples simpleStreams style): a launch shape or an allocation
// size held in a variable that is written AFTER the first allocation. The begin probe goes before
// the first allocation, where such a variable still holds its old value, so the task must not
// be static with that text: it goes lazy. A write after the last use (no loop around both) is
// harmless and the task stays static. Host code also calls max()/min() on floats and ints, which
// nvcc allows host-side (math_functions.hpp) and clang's CUDA headers make device-only.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void fill(int *x, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = v;
}

// Shape assigned between the allocation and the launch.
// CHECK-LABEL: int shapeAssignedLate(int n)
int shapeAssignedLate(int n) {
  dim3 grid, block;
  int *d;
  int host[1024];
  // CHECK-NOT: = mgb_task{{_}}begin
  cudaMalloc((void **)&d, n * sizeof(int));
  block = dim3(256);
  grid = dim3((n + block.x - 1) / block.x);
  // CHECK: {{^ *}}mgb_prepare(mgb_dim(grid), mgb_dim(block), (const void *)fill
  fill<<<grid, block>>>(d, 3, n);
  cudaMemcpy(host, d, n * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  int bad = 0;
  for (int i = 0; i < n; ++i)
    bad += host[i] != 3;
  return bad;
}

// Allocation size reassigned between two allocations of the same task.
// CHECK-LABEL: int sizeReassigned(int n)
int sizeReassigned(int n) {
  size_t bytes = n * sizeof(int);
  int *a, *b;
  int host[1024];
  // CHECK-NOT: = mgb_task{{_}}begin
  cudaMalloc((void **)&a, bytes);
  bytes = 2 * n * sizeof(int);
  cudaMalloc((void **)&b, bytes);
  // CHECK: {{^ *}}mgb_prepare(
  fill<<<(2 * n + 255) / 256, 256>>>(b, 5, 2 * n);
  // CHECK: {{^ *}}mgb_prepare(
  fill<<<(n + 255) / 256, 256>>>(a, 0, n);
  cudaMemcpy(host, b + n, n * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(a);
  cudaFree(b);
  int bad = 0;
  for (int i = 0; i < n; ++i)
    bad += host[i] != 5;
  return bad;
}

// The shape variable is only written after its last use: static.
// CHECK-LABEL: int writtenAfterUse(int n)
int writtenAfterUse(int n) {
  int blocks = (n + 255) / 256;
  int *d;
  int host[1024];
  // CHECK: {{^ *}}mgb_task mgb_task_{{[0-9]+}} = mgb_task_begin((size_t)(n * sizeof(int)), mgb_dim(blocks), mgb_dim(256)
  cudaMalloc((void **)&d, n * sizeof(int));
  fill<<<blocks, 256>>>(d, 7, n);
  cudaMemcpy(host, d, n * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  // CHECK: {{^ *}}mgb_task_end(
  blocks = 0;
  int bad = blocks;
  for (int i = 0; i < n; ++i)
    bad += host[i] != 7;
  return bad;
}

int main() {
  // Host min()/max(): nvcc's math_functions.hpp declares them __host__ __device__.
  int n = min(1024, max(1, 1000));
  float scale = max(32.0f / 16.0f, 1.0f);
  int bad = shapeAssignedLate(n) + sizeReassigned(n / 2) + writtenAfterUse(n);
  printf("scale %.1f\n", scale);
  printf("%s\n", bad == 0 ? "PASS" : "FAIL");
  return bad == 0 ? 0 : 1;
}
