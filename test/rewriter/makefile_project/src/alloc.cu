#include "buffers.h"
#include <cuda_runtime.h>

float *device_buffer(size_t n) {
  float *p = nullptr;
  if (cudaMalloc(&p, n * sizeof(float)) != cudaSuccess)
    return nullptr;
  return p;
}

void release_buffer(float *p) { cudaFree(p); }
