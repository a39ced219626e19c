// Device code nvcc accepts (with a warning at most) but clang's host-side parse reports as errors:
// narrowing in a kernel's initializer list (nvcc: warning #2361-D) and a __shared__ variable of a
// class with a default member initializer (nvcc: no diagnostic). Such errors must not make the
// source fall back to being compiled unrewritten: they are warnings for the parse, and -w (as
// the drivers pass it) hides them. Narrowing in host code is clang's default-error warning:
// a warning too (g++ and nvcc judge it when they compile the rewrite).
// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr
// RUN: %strip-check-comments %t/first/device_diagnostics.cu | FileCheck %s
// RUN: %mgb-rewrite --root %S -o %t/quiet %s -- -w 2> %t.quiet-stderr
// RUN: test ! -s %t.quiet-stderr
// RUN: cmp %t/first/device_diagnostics.cu %t/quiet/device_diagnostics.cu
// RUN: %golden %t %s
#include <cstdio>
#include <cuda_runtime.h>

struct Accumulator {
  float sum = 0.0f;
};

__global__ void block_sum(const float *x, int n, float *out) {
  // CHECK-MESSAGES: device_diagnostics.cu:[[@LINE+1]]:{{[0-9]+}}: warning: initialization is not supported for __shared__ variables
  __shared__ Accumulator acc;
  if (threadIdx.x == 0)
    acc.sum = 0.0f;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    // CHECK-MESSAGES: device_diagnostics.cu:[[@LINE+1]]:{{[0-9]+}}: warning: type 'float' cannot be narrowed to 'int'
    int whole[] = {x[i] * 2.0f};
    atomicAdd(&acc.sum, whole[0] / 2.0f);
  }
  __syncthreads();
  if (threadIdx.x == 0)
    *out = acc.sum;
}

int main(int argc, char **) {
  const int n = 1024;
  // CHECK-MESSAGES: device_diagnostics.cu:[[@LINE+1]]:{{[0-9]+}}: warning: type 'double' cannot be narrowed to 'int'
  int threads[] = {argc * 256.0};
  float *d, *out, sum = 0;
  // CHECK: mgb_task_begin
  cudaMalloc(&d, n * sizeof(float));
  cudaMalloc(&out, sizeof(float));
  cudaMemset(d, 0, n * sizeof(float));
  block_sum<<<1, threads[0]>>>(d, n, out);
  cudaMemcpy(&sum, out, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  cudaFree(out);
  // CHECK: mgb_task_end
  std::printf("%g\n", sum);
  return 0;
}
