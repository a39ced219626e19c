/* C99 host code that calls the CUDA runtime (compiled with -std=c99 -pedantic-errors). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "gpu.h"

static void check(cudaError_t status) {
  if (status != cudaSuccess) {
    fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(status));
    exit(1);
  }
}

float *gpu_alloc(int n) {
  float *p = NULL;
  check(cudaMalloc((void **)&p, sizeof(float) * (size_t)n));
  return p;
}

void gpu_release(float *p) { check(cudaFree(p)); }

int gpu_pull_sum(const float *p, int n) {
  float *host = malloc(sizeof(float) * (size_t)n);
  int sum = 0;
  check(cudaMemcpy(host, p, sizeof(float) * (size_t)n, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    sum += (int)host[i];
  free(host);
  return sum;
}
