#include <cstdio>
#include <vector>

#include "kernels.cuh"

void report(const std::vector<float> &values);

int main() {
  const int n = 1 << 20;
  std::vector<float> host(n, 1.0f);
  float *device = nullptr;
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  cudaMalloc(&device, n * sizeof(float));
  cudaMemcpyAsync(device, host.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream);
  launch_scale(device, n, 3.0f, stream);
  cudaMemcpyAsync(host.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  cudaFree(device);
  cudaStreamDestroy(stream);
  report(host);
  return host[n - 1] == 3.0f ? 0 : 1;
}
