// Scales a vector on the GPU and checks it: the smallest program with a task to rewrite.
#include <cstdio>
#include <vector>

__global__ void Scale(float *x, int n, float by) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= by;
}

int main() {
  const int n = 1 << 20;
  std::vector<float> host(n, 2.0f);
  float *device = nullptr;
  cudaMalloc(&device, n * sizeof(float));
  cudaMemcpy(device, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  Scale<<<(n + 255) / 256, 256>>>(device, n, 3.0f);
  cudaMemcpy(host.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(device);
  std::printf("%s\n", host[n - 1] == 6.0f ? "ok" : "wrong");
  return host[n - 1] == 6.0f ? 0 : 1;
}
