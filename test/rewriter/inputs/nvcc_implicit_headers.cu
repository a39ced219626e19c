// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --allow-empty
// RUN: %strip-checks %t/first/nvcc_implicit_headers.cu | FileCheck %s
// RUN: %golden %t %s
// Calls nvcc compiles with no #include of their own, because its implicit cuda_runtime.h brings
// in <math.h>, <cmath>, <stdlib.h>, <string.h> and <time.h> (crt/common_functions.h and
// crt/math_functions.h): a host isfinite(float) in a template (llm.c's dev/cuda/common.h,
// round 11; clang's CUDA wrapper declares only the device overload, and the file fell back to
// unrewritten), fabs, memcpy and time. The parse includes the same headers
// (shim/mgb_nvcc_implicit.h); the rewrite adds none of them.
// CHECK-MESSAGES-NOT: error
// CHECK-MESSAGES-NOT: NOT rewritten
// CHECK-NOT: #include <math.h>
#include <cstdio>

template <class T>
int countFinite(const T *values, int n) {
  int finite = 0;
  for (int i = 0; i < n; i++)
    finite += isfinite(values[i]) ? 1 : 0;
  return finite;
}

__global__ void halve(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = x[i] / 2.0f;
}

// CHECK-LABEL: int main()
int main() {
  const int n = 256;
  float host[n], back[n];
  for (int i = 0; i < n; i++)
    host[i] = static_cast<float>(i) - 128.0f;
  float *device = nullptr;
  // CHECK: mgb_task_begin(
  cudaMalloc(&device, n * sizeof(float));
  cudaMemcpy(device, host, n * sizeof(float), cudaMemcpyHostToDevice);
  halve<<<1, n>>>(device, n);
  cudaMemcpy(back, device, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(device);
  float copy[n];
  memcpy(copy, back, sizeof copy);
  double sum = 0;
  for (int i = 0; i < n; i++)
    sum += fabs(copy[i]);
  printf("finite %d of %d, sum of |x/2| %.1f, clock %s\n", countFinite(copy, n), n, sum,
         time(NULL) > 0 ? "set" : "unset");
  return 0;
}
