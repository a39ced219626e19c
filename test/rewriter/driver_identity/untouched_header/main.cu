// A task in a source that includes a header the rewrite does not edit (where.h).
#include "where.h"

__global__ void touch(float *d) {
  where_device();
  d[threadIdx.x] = 1.0f;
}

int main() {
  where_host();
  float *d = nullptr;
  cudaMalloc(&d, 32 * sizeof(float));
  touch<<<1, 32>>>(d);
  cudaDeviceSynchronize();
  cudaFree(d);
  return 0;
}
