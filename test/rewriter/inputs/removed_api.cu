// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --implicit-check-not=warning:
// RUN: %strip-checks %t/first/removed_api.cu | FileCheck %s
// RUN: %golden %t %s
// Old CUDA code calls runtime functions CUDA 12/13 removed (cudaThreadSynchronize): the rewrite
// must still parse it and rename the calls to what replaced them, so that nvcc 13 compiles it.
// nvcc rejects the file as written: each such call gets a warning that says so (round 17; a
// call in a macro body is reported after the others).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

// The call in the macro body is renamed in the definition.
// CHECK: if (mgb_cudaDeviceSynchronize() != cudaSuccess)
#define SYNC_AND_CHECK()                                                                         \
  do {                                                                                           \
    if (cudaThreadSynchronize() != cudaSuccess)                                                  \
      exit(1);                                                                                   \
  } while (0)

__global__ void scale(float *x, float f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= f;
}

int main() {
  const int n = 1024;
  float host[n];
  for (int i = 0; i < n; ++i)
    host[i] = (float)i;
  float *dev;
  // CHECK: mgb_task mgb_task_1 = mgb_task_begin(
  cudaMalloc((void **)&dev, n * sizeof(float));
  cudaMemcpy(dev, host, n * sizeof(float), cudaMemcpyHostToDevice);
  // CHECK-MESSAGES-DAG: removed_api.cu:[[@LINE+2]]:3: warning: `cudaThreadSetLimit` is not in this CUDA toolkit's runtime (removed in CUDA 12), so nvcc rejects this call as written; the rewrite calls `mgb_cudaDeviceSetLimit`, which replaced it
  // CHECK: mgb_cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 20);
  cudaThreadSetLimit(cudaLimitPrintfFifoSize, 1 << 20);
  scale<<<n / 256, 256>>>(dev, 2.0f, n);
  // CHECK-MESSAGES-DAG: removed_api.cu:[[@LINE+2]]:3: warning: `cudaThreadSynchronize` is not in this CUDA toolkit's runtime
  // CHECK: mgb_cudaDeviceSynchronize();
  cudaThreadSynchronize();
  // CHECK-MESSAGES-DAG: removed_api.cu:[[@LINE+2]]:3: warning: `cudaThreadSynchronize` is not in this CUDA toolkit's runtime
  // CHECK: {{^ *}}SYNC_AND_CHECK();
  SYNC_AND_CHECK();
  cudaMemcpy(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(dev);
  // CHECK: mgb_task_end(mgb_task_1);
  int bad = 0;
  for (int i = 0; i < n; ++i)
    bad += host[i] != 2.0f * i;
  // CHECK-MESSAGES-DAG: removed_api.cu:[[@LINE+2]]:3: warning: `cudaThreadExit` is not in this CUDA toolkit's runtime (removed in CUDA 12), so nvcc rejects this call as written; the rewrite calls `cudaDeviceReset`, which replaced it
  // CHECK: cudaDeviceReset();
  cudaThreadExit();
  printf("%s\n", bad ? "FAIL" : "PASS");
  return bad != 0;
}
