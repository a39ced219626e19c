#include <cstdio>
#include "config.h"

__global__ void scale(float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= ONE_SCALE;
}

int main() {
  const int n = 256;
  float host[n];
  for (int i = 0; i < n; ++i) host[i] = float(i);
  float *dev = nullptr;
  cudaMalloc(&dev, n * sizeof(float));
  cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<1, n>>>(dev, n);
  cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dev);
  std::printf("%s\n", run_two(host, n) == 0 ? "PASS" : "FAIL");
  return 0;
}
