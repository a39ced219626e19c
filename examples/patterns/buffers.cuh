// Pattern (header of the project): device-buffer helpers used by two translation units.
#ifndef MGB_PATTERNS_BUFFERS_CUH
#define MGB_PATTERNS_BUFFERS_CUH

#include <cstddef>

// Allocated here, used by kernels launched in another file: the lazy layer binds them.
float *device_buffer(size_t count);
void upload(float *dst, const float *src, size_t count);

// CHECK: {{^ *}}mgb_cudaMemcpy(dst, src, count * sizeof(float), cudaMemcpyDeviceToHost);
inline void download(float *dst, const float *src, size_t count) {
  cudaMemcpy(dst, src, count * sizeof(float), cudaMemcpyDeviceToHost);
}

#endif
