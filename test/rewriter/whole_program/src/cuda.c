/* Every cudaMalloc/cudaMemcpy/cudaFree of the program lives here, in C (darknet's src/cuda.c). */
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>

void check_error(cudaError_t status) {
  if (status != cudaSuccess) {
    fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(status));
    exit(1);
  }
}

int cuda_blocks(size_t n) { return (int)((n + BLOCK - 1) / BLOCK); }

float *cuda_make_array(const float *x, size_t n) {
  float *x_gpu;
  size_t size = sizeof(float) * n;
  check_error(cudaMalloc((void **)&x_gpu, size));
  if (x)
    check_error(cudaMemcpy(x_gpu, x, size, cudaMemcpyHostToDevice));
  else
    check_error(cudaMemset(x_gpu, 0, size));
  return x_gpu;
}

void cuda_push_array(float *x_gpu, const float *x, size_t n) {
  check_error(cudaMemcpy(x_gpu, x, sizeof(float) * n, cudaMemcpyHostToDevice));
}

void cuda_pull_array(float *x_gpu, float *x, size_t n) {
  check_error(cudaMemcpy(x, x_gpu, sizeof(float) * n, cudaMemcpyDeviceToHost));
}

void cuda_free(float *x_gpu) { check_error(cudaFree(x_gpu)); }
