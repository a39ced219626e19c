// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- -I%S
// RUN: %strip-checks %t/first/blas_kernels.cu | FileCheck %s
// RUN: %golden %t %s -- -I%S
// Golden test cuda_h_shadow: a project header named cuda.h on the include path (-Isrc, as in
// darknet) shadowed the toolkit's for clang's CUDA wrapper: every .cu failed to parse with
// "cuda.h did not define CUDA_VERSION", while nvcc builds it.
#include "cuda.h"

// CHECK: #include <mgb/mgb.h>
// CHECK: #include "cuda.h"

// The project's own cuda.h is the one this file gets (for clang's wrapper, the toolkit's too).
#ifndef BLOCK
#error "expected the project's cuda.h"
#endif

__global__ void scal_kernel(int N, float ALPHA, float *X, int INCX) {
  int i = (blockIdx.x + blockIdx.y * gridDim.x) * blockDim.x + threadIdx.x;
  if (i < N)
    X[i * INCX] *= ALPHA;
}

// CHECK-LABEL: void scal_gpu(
// CHECK: mgb_prepare(mgb_dim(cuda_gridsize(N)), mgb_dim(BLOCK), (const void *)scal_kernel, "blas_kernels.cu:{{[0-9]+}}", X);
// CHECK-NEXT: scal_kernel<<<cuda_gridsize(N), BLOCK>>>(N, ALPHA, mgb_arg(X), INCX);
extern "C" void scal_gpu(int N, float ALPHA, float *X, int INCX) {
  scal_kernel<<<cuda_gridsize(N), BLOCK>>>(N, ALPHA, X, INCX);
  check_error(cudaPeekAtLastError());
}

// CHECK-LABEL: void scale_on_gpu(
// CHECK: mgb_task mgb_task_1 = mgb_task_begin((size_t)(n * sizeof(float)), mgb_dim((n + BLOCK - 1) / BLOCK), mgb_dim(BLOCK), (const void *)scal_kernel,
// CHECK: check_error(mgb_cudaMalloc((void **)&x_gpu, n * sizeof(float)));
// CHECK: check_error(mgb_cudaFree(x_gpu));
// CHECK-NEXT: mgb_task_end(mgb_task_1);
extern "C" void scale_on_gpu(float *x, int n, float a) {
  float *x_gpu;
  check_error(cudaMalloc((void **)&x_gpu, n * sizeof(float)));
  check_error(cudaMemcpy(x_gpu, x, n * sizeof(float), cudaMemcpyHostToDevice));
  scal_kernel<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(n, a, x_gpu, 1);
  check_error(cudaMemcpy(x, x_gpu, n * sizeof(float), cudaMemcpyDeviceToHost));
  check_error(cudaFree(x_gpu));
}
