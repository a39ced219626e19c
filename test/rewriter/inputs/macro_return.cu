// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/macro_return.cu | FileCheck %s
// RUN: %golden %t %s
// Found on third-party code (HeCBench spmv: CHECK_CUSPARSE holds `return EXIT_FAILURE;`). A
// return spelled in a macro body cannot get an end probe before it; the whole task went lazy.
// Now the begin declares a local guard whose destructor ends the task when the block is left
// that way; an end after the region's last statement (when that is not a return) disarms it. A
// plain return in the region needs no end of its own then.
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(call)                                                                            \
  {                                                                                            \
    cudaError_t err = (call);                                                                  \
    if (err != cudaSuccess) {                                                                  \
      printf("CUDA error %s at line %d\n", cudaGetErrorString(err), __LINE__);                 \
      return -1;                                                                               \
    }                                                                                          \
  }

__global__ void twice(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.f;
}

// CHECK-LABEL: int scale(float *host, int n)
int scale(float *host, int n) {
  float *d;
  // CHECK: {{^ *}}mgb_task mgb_task_[[N:[0-9]+]] = mgb_task_begin((size_t)(n * sizeof(float)), mgb_dim((n + 255) / 256), mgb_dim(256), (const void *)twice, "macro_return.cu:{{[0-9]+}}");
  // CHECK-NEXT: {{^ *}}struct mgb_task_[[N]]_scope { mgb_task t; ~mgb_task_[[N]]_scope() { mgb_task_end(t); } } mgb_task_[[N]]_guard{mgb_task_[[N]]};
  // CHECK-NEXT: CHECK(cudaMalloc(&d, n * sizeof(float)))
  CHECK(cudaMalloc(&d, n * sizeof(float)))
  CHECK(cudaMemcpy(d, host, n * sizeof(float), cudaMemcpyHostToDevice))
  // CHECK-NOT: mgb_prepare
  twice<<<(n + 255) / 256, 256>>>(d, n);
  if (n > (1 << 30))
    // CHECK: {{^ *}}return -2;
    return -2;
  CHECK(cudaMemcpy(host, d, n * sizeof(float), cudaMemcpyDeviceToHost))
  // The memory is not freed on the early-return paths: the task lasts to the function's end,
  // where the guard ends it.
  CHECK(cudaFree(d))
  // CHECK: CHECK(cudaFree(d))
  // CHECK-NEXT: {{^ *}}return 0;
  return 0;
}

#define CHECK_VOID(call)                                                                       \
  {                                                                                            \
    if ((call) != cudaSuccess)                                                                 \
      return;                                                                                  \
  }

// CHECK-LABEL: void report(int n)
void report(int n) {
  float *d;
  // CHECK: {{^ *}}struct mgb_task_[[M:[0-9]+]]_scope {
  CHECK_VOID(cudaMalloc(&d, n * sizeof(float)))
  twice<<<1, 32>>>(d, n);
  CHECK_VOID(cudaFree(d))
  // The free ends the task on every returning path: the end after it disarms the guard.
  // CHECK: CHECK_VOID(cudaFree(d))
  // CHECK-NEXT: {{^ *}}mgb_task_end(mgb_task_[[M]]); mgb_task_[[M]]_guard.t = 0;
  printf("done\n");
}

int main() {
  float h[1000] = {1.f};
  printf("%d %f\n", scale(h, 1000), h[0]);
  report(32);
  return 0;
}
