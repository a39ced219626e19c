// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- -x c 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --implicit-check-not='{{cannot be bound|works on the GPU}}'
// RUN: %strip-checks %t/first/c_static_task.c | FileCheck %s
// RUN: %golden --host-compiler %gcc %t %s -- -x c
/* Golden test c_static_task: tasks in a C file. C has no kernel launches, so its tasks are host
 * library calls on device memory of one function (cuBLAS here); their probes must be C:
 * `(mgb_dim3){1, 1, 1}` and a null kernel instead of mgb_dim() and nullptr, a C cast for a size
 * declared after the first allocation. Where C++ would use a scope guard (a return inside a macro
 * body) the task is not static: its library call is routed in C's form, mgb_prepare_pointers
 * before it and mgb_real_ptr around its device pointers. */
#include <stdlib.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>

// CHECK: #include <mgb/mgb.h>
// CHECK-NOT: #include <mgb/unseen_tu.h>

#define CHECK_CUDA(call)                                                                          \
  do {                                                                                            \
    if ((call) != cudaSuccess)                                                                    \
      exit(1);                                                                                    \
  } while (0)
#define CHECK_CUBLAS_RET(call)                                                                    \
  do {                                                                                            \
    if ((call) != CUBLAS_STATUS_SUCCESS)                                                          \
      return -1;                                                                                  \
  } while (0)

// CHECK-LABEL: int saxpy(
// CHECK: mgb_task mgb_task_1 = mgb_task_begin((size_t)(n * sizeof(float)) + (size_t){{\(+}}size_t)(n * sizeof(float)){{\)+}}, (mgb_dim3){1, 1, 1}, (mgb_dim3){1, 1, 1}, (const void *)0, "c_static_task.c:{{[0-9]+}}");
// CHECK-NEXT: CHECK_CUDA(cudaMalloc((void **)&dx, n * sizeof(float)));
// CHECK: CHECK_CUDA(cudaFree(dy));
// CHECK-NEXT: mgb_task_end(mgb_task_1);
int saxpy(cublasHandle_t h, int n, float a, const float *x, float *y) {
  float *dx, *dy;
  CHECK_CUDA(cudaMalloc((void **)&dx, n * sizeof(float)));
  size_t bytes = n * sizeof(float);
  CHECK_CUDA(cudaMalloc((void **)&dy, bytes));
  CHECK_CUDA(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dy, y, bytes, cudaMemcpyHostToDevice));
  // CHECK-MESSAGES: c_static_task.c:[[@LINE+1]]:{{[0-9]+}}: warning: library handle created outside the task
  cublasSaxpy(h, n, &a, dx, 1, dy, 1);
  CHECK_CUDA(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(dx));
  CHECK_CUDA(cudaFree(dy));
  return 0;
}

// CHECK-LABEL: int scale_checked(
// CHECK-NOT: mgb_task_begin
// CHECK: mgb_prepare_pointers("c_static_task.c:{{[0-9]+}}", 1, (const void *const[]){(const void *)(dy)});
// CHECK-NEXT: CHECK_CUBLAS_RET(cublasSscal(h, n, &a, mgb_real_ptr(dy), 1));
int scale_checked(cublasHandle_t h, int n, float a, float *y) {
  float *dy;
  CHECK_CUDA(cudaMalloc((void **)&dy, n * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(dy, y, n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUBLAS_RET(cublasSscal(h, n, &a, dy, 1));
  CHECK_CUDA(cudaMemcpy(y, dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(dy));
  return 0;
}
