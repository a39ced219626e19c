// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/kernel_pointer.cu | FileCheck %s
// RUN: %golden %t %s
// Found on third-party code (cuda-samples transpose style): kernels launched through a
// function-pointer variable that a loop of the task sets (`k = &scale;` in a switch) before the
// launch. The begin probe goes before the first allocation, where the variable holds no kernel
// yet: mgb_task_begin gets nullptr rather than the stale pointer. A pointer set once before the
// task is named; the lazy form names the pointer at the launch, where it is current.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 2.0f * x[i];
}

__global__ void copy(float *y, const float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = x[i];
}

// CHECK-LABEL: int pickedInLoop(int n)
int pickedInLoop(int n) {
  void (*kernel)(float *, const float *, int);
  float *x, *y;
  float host[256];
  // CHECK: {{^ *}}mgb_task mgb_task_{{[0-9]+}} = mgb_task_begin((size_t)(n * sizeof(float)) + (size_t)(n * sizeof(float)), mgb_dim((n + 127) / 128), mgb_dim(128), (const void *)nullptr, "kernel_pointer.cu:[[#@LINE+12]]");
  cudaMalloc((void **)&x, n * sizeof(float));
  cudaMalloc((void **)&y, n * sizeof(float));
  for (int k = 0; k < 2; ++k) {
    switch (k) {
    case 0:
      kernel = &copy;
      break;
    default:
      kernel = &scale;
      break;
    }
    kernel<<<(n + 127) / 128, 128>>>(y, x, n);
  }
  cudaMemcpy(host, y, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(x);
  cudaFree(y);
  // CHECK: {{^ *}}mgb_task_end(
  return host[0] == 0.0f ? 0 : 1;
}

// CHECK-LABEL: int pickedBefore(int n, bool twice)
int pickedBefore(int n, bool twice) {
  void (*kernel)(float *, const float *, int) = twice ? &scale : &copy;
  float *x, *y;
  // CHECK: {{^ *}}mgb_task mgb_task_{{[0-9]+}} = mgb_task_begin({{.*}}, (const void *)kernel, "kernel_pointer.cu:[[#@LINE+3]]");
  cudaMalloc((void **)&x, n * sizeof(float));
  cudaMalloc((void **)&y, n * sizeof(float));
  kernel<<<(n + 127) / 128, 128>>>(y, x, n);
  cudaFree(x);
  cudaFree(y);
  return 0;
}

int main() {
  printf("%d %d\n", pickedInLoop(256), pickedBefore(256, true));
  return 0;
}
