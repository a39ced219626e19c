// A project header outside --root (like cuda-samples' Common/): it is not rewritten, so its CUDA
// calls are renamed by a #define in the including source, and its launch is reported.
#pragma once
#include <cuda_runtime.h>

__global__ void add_one(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] += 1;
}

inline int pick_device() {
  int count = 0;
  cudaGetDeviceCount(&count);
  cudaSetDevice(count > 1 ? 1 : 0);
  return count > 1 ? 1 : 0;
}

// CHECK-MESSAGES: launch_helpers.h:[[@LINE+1]]:{{[0-9]+}}: warning: this launch is in a file outside --root
inline void add_one_on_device(int *p, int n) { add_one<<<(n + 255) / 256, 256>>>(p, n); }
