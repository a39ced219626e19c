#include "config.h"

__global__ void offset(float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] += TWO_OFFSET;
}

int run_two(float *host, int n) {
  float *dev = nullptr;
  cudaMalloc(&dev, n * sizeof(float));
  cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice);
  offset<<<1, n>>>(dev, n);
  cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dev);
  return host[1] == 2 + TWO_OFFSET ? 0 : 1;
}
