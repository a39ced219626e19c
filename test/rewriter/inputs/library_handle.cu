// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr
// RUN: %strip-checks %t/first/library_handle.cu | FileCheck %s
// RUN: %golden %t %s
// cuBLAS/cuSPARSE/cuFFT/cuRAND tie a handle to the device current at its
// creation, and mgb only picks the task's GPU at mgb_task_begin. A handle created in the
// function, in the task's block, before the task's first allocation now starts the task (the
// begin precedes cublasCreate) and its destroy ends it; a handle from elsewhere (a parameter)
// keeps today's region and is reported.
#include <cstdio>
#include <cstdlib>
#include <cublas_v2.h>
#include <cuda_runtime.h>

// CHECK-LABEL: float gemmThenAxpy(int n)
float gemmThenAxpy(int n) {
  // CHECK: cublasHandle_t handle;
  // CHECK-NEXT: mgb_task {{mgb_task_[0-9]+}} = mgb_task_begin((size_t)(n * n * sizeof(float)) + (size_t)(n * n * sizeof(float)) + (size_t)(n * n * sizeof(float)), mgb_dim(1), mgb_dim(1), (const void *)nullptr, "library_handle.cu:{{[0-9]+}}");
  // CHECK-NEXT: cublasCreate(&handle);
  cublasHandle_t handle;
  cublasCreate(&handle);
  const float alpha = 1.f, beta = 0.f;
  size_t bytes = n * n * sizeof(float);
  float *h_a = (float *)malloc(bytes);
  float *h_c = (float *)malloc(bytes);
  for (int i = 0; i < n * n; ++i)
    h_a[i] = 1.f;
  float *d_a, *d_b, *d_c;
  cudaMalloc(&d_a, n * n * sizeof(float));
  cudaMalloc(&d_b, n * n * sizeof(float));
  cudaMalloc(&d_c, n * n * sizeof(float));
  cudaMemcpy(d_a, h_a, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(d_b, h_a, bytes, cudaMemcpyHostToDevice);
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, d_a, n, d_b, n, &beta, d_c, n);
  cublasSaxpy(handle, n * n, &alpha, d_a, 1, d_c, 1);
  cudaMemcpy(h_c, d_c, bytes, cudaMemcpyDeviceToHost);
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFree(d_c);
  // CHECK: cudaFree(d_c);
  // CHECK-NEXT: cublasDestroy(handle);
  // CHECK-NEXT: mgb_task_end(
  cublasDestroy(handle);
  float first = h_c[0];
  free(h_a);
  free(h_c);
  return first;
}

// The caller's handle: the task keeps its region (from the first allocation) and is reported.
// CHECK-LABEL: float axpyWith(cublasHandle_t handle, int n)
float axpyWith(cublasHandle_t handle, int n) {
  const float alpha = 3.f;
  float *h = (float *)calloc(n, sizeof(float));
  float *d_x, *d_y;
  // CHECK: mgb_task_begin(
  // CHECK-NEXT: cudaMalloc(&d_x, n * sizeof(float));
  cudaMalloc(&d_x, n * sizeof(float));
  cudaMalloc(&d_y, n * sizeof(float));
  cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(d_y, 0, n * sizeof(float));
  // CHECK-MESSAGES: library_handle.cu:[[@LINE+1]]:{{[0-9]+}}: warning: library handle created outside the task: it stays on the device current at its creation
  cublasSaxpy(handle, n, &alpha, d_x, 1, d_y, 1);
  cudaMemcpy(h, d_y, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d_x);
  cudaFree(d_y);
  // CHECK: cudaFree(d_y);
  // CHECK-NEXT: mgb_task_end(
  float first = h[0];
  free(h);
  return first;
}

int main() {
  cublasHandle_t handle;
  cublasCreate(&handle);
  printf("%f %f\n", gemmThenAxpy(64), axpyWith(handle, 1 << 10));
  cublasDestroy(handle);
  return 0;
}
