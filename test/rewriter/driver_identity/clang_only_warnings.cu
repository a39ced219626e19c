// Code on which clang's host-side parse warns by default and nvcc prints nothing: mgb-nvcc must
// print nothing either (test: rewriter.driver_source_identity).
#include <cstdio>
#include <cuda_runtime.h>

// clang: -Wreturn-type-c-linkage
extern "C" dim3 grid_for(int n) { return dim3((n + 255) / 256); }

__global__ void fill(float *x, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = v;
}

int main(int argc, char **) {
  int n = argc << 10;
  // clang: -Wparentheses-equality
  if ((n == 0))
    return 1;
  float *d;
  cudaMalloc(&d, n * sizeof(float));
  fill<<<grid_for(n), 256>>>(d, n, 1.0f);
  cudaFree(d);
  std::printf("%d\n", __LINE__);
  return 0;
}
