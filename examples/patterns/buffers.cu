// Pattern (multiple translation units): allocation in one .cu, launch in another (multi_tu.cu).
#include "buffers.cuh"

float *device_buffer(size_t count) {
  // Allocated here, launched elsewhere: no probe, the renamed call hands out a stand-in.
  // CHECK-NOT: {{^ *}}mgb_task mgb_task_
  // CHECK: {{^ *}}if (mgb_cudaMalloc(&p, count * sizeof(float)) != cudaSuccess)
  float *p = nullptr;
  if (cudaMalloc(&p, count * sizeof(float)) != cudaSuccess)
    return nullptr;
  return p;
}

void upload(float *dst, const float *src, size_t count) {
  cudaMemcpy(dst, src, count * sizeof(float), cudaMemcpyHostToDevice);
}
