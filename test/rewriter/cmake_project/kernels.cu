#include "kernels.cuh"

__global__ void scale(float *x, int n, float factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}

// The buffer comes from another translation unit: the launch goes through mgb's lazy layer.
void launch_scale(float *x, int n, float factor, cudaStream_t stream) {
  scale<<<(n + 255) / 256, 256, 0, stream>>>(x, n, factor);
}

float scale_round_trip(int n, float factor) {
  float *x = nullptr, last = 1.0f;
  cudaMalloc(&x, n * sizeof(float));
  cudaMemcpy(x + n - 1, &last, sizeof last, cudaMemcpyHostToDevice);
  scale<<<(n + 255) / 256, 256>>>(x, n, factor);
  cudaMemcpy(&last, x + n - 1, sizeof last, cudaMemcpyDeviceToHost);
  cudaFree(x);
  return last;
}
