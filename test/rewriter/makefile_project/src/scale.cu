#include "buffers.h"
#include <cuda_runtime.h>
#include <vector>

__global__ void scale(float *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] *= SCALE_FACTOR;
}

void scale_on_device(float *p, int n) { scale<<<(n + 127) / 128, 128>>>(p, n); }

int run_pipeline(int n) {
  std::vector<float> host(n, 1.0f);
  float *p = device_buffer(n);
  cudaMemcpy(p, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  scale_on_device(p, n);
  offset_on_device(p, n, 0.5f);
  cudaMemcpy(host.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost);
  release_buffer(p);
  int bad = 0;
  for (float v : host)
    bad += v != SCALE_FACTOR * 1.0f + 0.5f;
  return bad;
}
