// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --allow-empty
// RUN: %strip-checks %t/first/library_calls.cu | FileCheck %s
// RUN: %golden %t %s
// CHECK-MESSAGES-NOT: warning
// Found on third-party code (HeCBench spmv): functions that hand device memory to a CUDA library
// (cuSPARSE, cuBLAS) and launch no kernel of their own had no task, so the library received
// stand-in pointers (cuSPARSE failed with an internal error). A host library call taking device
// memory of the function is now a member of that memory's task: inside a static task (no shape of
// its own: one thread, kernel nullptr), or, when the task is lazy (here: a goto in the error
// checks), after an mgb_prepare that binds its memory (with the memory earlier library calls
// bound, so that all of it lands on one GPU) and with the pointers passed through mgb_arg.
#include <cstdio>
#include <cstdlib>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CHECK_BLAS(call)                                                                       \
  {                                                                                            \
    if ((call) != CUBLAS_STATUS_SUCCESS)                                                       \
      goto failed;                                                                             \
  }

// CHECK-LABEL: float axpyStatic(int n)
float axpyStatic(int n) {
  float *h = (float *)calloc(n, sizeof(float));
  float *d_x, *d_y;
  const float alpha = 2.f;
  cublasHandle_t handle;
  cublasCreate(&handle);
  // CHECK: mgb_task_begin((size_t)(n * sizeof(float)) + (size_t)(n * sizeof(float)), mgb_dim(1), mgb_dim(1), (const void *)nullptr, "library_calls.cu:{{[0-9]+}}");
  cudaMalloc(&d_x, n * sizeof(float));
  cudaMalloc(&d_y, n * sizeof(float));
  cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(d_y, 0, n * sizeof(float));
  // CHECK-NOT: mgb_arg
  cublasSaxpy(handle, n, &alpha, d_x, 1, d_y, 1);
  cudaMemcpy(h, d_y, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_y);
  // CHECK: mgb_task_end(
  cublasDestroy(handle);
  float first = h[0];
  free(h);
  return first;
}

// CHECK-LABEL: float axpyLazy(int n)
float axpyLazy(int n) {
  float *d_x, *d_y;
  const float alpha = 2.f;
  float result = 0.f;
  cublasHandle_t handle;
  CHECK_BLAS(cublasCreate(&handle))
  cudaMalloc(&d_x, n * sizeof(float));
  cudaMalloc(&d_y, n * sizeof(float));
  cudaMemset(d_x, 0, n * sizeof(float));
  cudaMemset(d_y, 0, n * sizeof(float));
  // CHECK: {{^ *}}mgb_prepare(mgb_dim(1), mgb_dim(1), nullptr, "library_calls.cu:{{[0-9]+}}", d_x, d_y);
  // CHECK-NEXT: CHECK_BLAS(cublasSaxpy(handle, n, &alpha, mgb_arg(d_x), 1, mgb_arg(d_y), 1))
  CHECK_BLAS(cublasSaxpy(handle, n, &alpha, d_x, 1, d_y, 1))
  // CHECK: {{^ *}}mgb_prepare(mgb_dim(1), mgb_dim(1), nullptr, "library_calls.cu:{{[0-9]+}}", d_y, d_x);
  // CHECK-NEXT: CHECK_BLAS(cublasSdot(handle, n, mgb_arg(d_y), 1, mgb_arg(d_y), 1, &result))
  CHECK_BLAS(cublasSdot(handle, n, d_y, 1, d_y, 1, &result))
failed:
  cudaFree(d_x);
  cudaFree(d_y);
  cublasDestroy(handle);
  return result;
}

int main() {
  printf("%f %f\n", axpyStatic(1 << 10), axpyLazy(1 << 10));
  return 0;
}
