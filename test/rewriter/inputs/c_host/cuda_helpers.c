// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- -x c 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --allow-empty
// RUN: %strip-checks %t/first/cuda_helpers.c | FileCheck %s
// RUN: %golden --host-compiler %gcc %t %s -- -x c
// CHECK-MESSAGES-NOT: warning
/* Golden test c_host_calls: a host C file that does every cudaMalloc/cudaMemcpy/cudaFree of its
 * program (darknet's src/cuda.c; kernels and launch wrappers live in .cu files). It is parsed as
 * C (-x c), not CUDA, and compiled by gcc: its runtime calls become the mgb_ twins, each in C. */
#include <stdio.h>
#include <stdlib.h>
#include <assert.h>

#include "cuda_runtime.h"

// CHECK: #include <mgb/mgb.h>

#define BLOCK 512

void check_error(cudaError_t status) {
  if (status != cudaSuccess) {
    fprintf(stderr, "CUDA Error: %s\n", cudaGetErrorString(status));
    exit(1);
  }
}

// CHECK-LABEL: void cuda_set_device(
// CHECK: check_error(mgb_cudaSetDevice(n));
void cuda_set_device(int n) { check_error(cudaSetDevice(n)); }

// CHECK-LABEL: float *cuda_make_array(
// CHECK: check_error(mgb_cudaMalloc((void **)&x_gpu, size));
// CHECK: check_error(mgb_cudaMemcpy(x_gpu, x, size, cudaMemcpyHostToDevice));
// CHECK: check_error(mgb_cudaMemset(x_gpu, 0, size));
float *cuda_make_array(float *x, size_t n) {
  float *x_gpu;
  size_t size = sizeof(float) * n;
  check_error(cudaMalloc((void **)&x_gpu, size));
  if (x)
    check_error(cudaMemcpy(x_gpu, x, size, cudaMemcpyHostToDevice));
  else
    check_error(cudaMemset(x_gpu, 0, size));
  if (!x_gpu)
    fprintf(stderr, "cuda malloc failed\n");
  return x_gpu;
}

// CHECK: mgb_cudaMemcpy(x_gpu, x, size, cudaMemcpyHostToDevice);
void cuda_push_array(float *x_gpu, float *x, size_t n) {
  size_t size = sizeof(float) * n;
  cudaError_t status = cudaMemcpy(x_gpu, x, size, cudaMemcpyHostToDevice);
  check_error(status);
}

// CHECK: mgb_cudaMemcpy(x, x_gpu, size, cudaMemcpyDeviceToHost);
void cuda_pull_array(float *x_gpu, float *x, size_t n) {
  size_t size = sizeof(float) * n;
  cudaError_t status = cudaMemcpy(x, x_gpu, size, cudaMemcpyDeviceToHost);
  check_error(status);
}

// CHECK: check_error(mgb_cudaFree(x_gpu));
void cuda_free(float *x_gpu) { check_error(cudaFree(x_gpu)); }

/* Events take no default arguments in C: nothing is spelled out. */
// CHECK: mgb_cudaEventCreate(&start);
// CHECK: mgb_cudaEventRecord(start, 0);
// CHECK: mgb_cudaDeviceSynchronize();
// CHECK: mgb_cudaEventDestroy(start);
void cuda_sync_timed(void) {
  cudaEvent_t start;
  cudaEventCreate(&start);
  cudaEventRecord(start, 0);
  cudaDeviceSynchronize();
  cudaEventDestroy(start);
}
