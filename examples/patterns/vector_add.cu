// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/vector_add.cu | FileCheck %s
// RUN: %golden %t %s
// Pattern: one function allocates, copies, launches and frees (the paper's Figure 1). The grid is
// declared after the allocations; API calls sit inside a CHECK macro and an `if` condition.
// CHECK: {{^}}#include <mgb/mgb.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                    \
  do {                                                                                 \
    cudaError_t err_ = (call);                                                         \
    if (err_ != cudaSuccess) {                                                         \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));    \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

__global__ void vec_add(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

int main() {
  const int n = 1 << 20;
  const size_t bytes = n * sizeof(float);
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    a[i] = std::sin(i);
    b[i] = std::cos(i);
  }

  float *d_a, *d_b, *d_c;
  // The begin dominates the allocations and evaluates `grid`/`block` from their initialisers.
  // CHECK: {{^ *}}mgb_task mgb_task_1 = mgb_task_begin((size_t)(bytes) + (size_t)(bytes) + (size_t)(bytes), mgb_dim((dim3((n + (dim3(256)).x - 1) / (dim3(256)).x))), mgb_dim((dim3(256))), (const void *)vec_add, "vector_add.cu:{{[0-9]+}}");
  // CHECK-NEXT: {{^ *}}CHECK(cudaMalloc(&d_a, bytes));
  // CHECK: {{^ *}}if (mgb_cudaMalloc((void **)&d_c, bytes) != cudaSuccess) {
  // CHECK: {{^ *}}{ mgb_task_end(mgb_task_1); return 1; }
  // CHECK: {{^ *}}vec_add<<<grid, block>>>(d_a, d_b, d_c, n);
  CHECK(cudaMalloc(&d_a, bytes));
  CHECK(cudaMalloc(&d_b, bytes));
  if (cudaMalloc((void **)&d_c, bytes) != cudaSuccess) {
    fprintf(stderr, "out of device memory\n");
    return 1;
  }
  CHECK(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice));

  dim3 block(256);
  dim3 grid((n + block.x - 1) / block.x);
  vec_add<<<grid, block>>>(d_a, d_b, d_c, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(c.data(), d_c, bytes, cudaMemcpyDeviceToHost));

  CHECK(cudaFree(d_a));
  CHECK(cudaFree(d_b));
  CHECK(cudaFree(d_c));
  // CHECK: {{^ *}}CHECK(cudaFree(d_c));
  // CHECK-NEXT: {{^ *}}mgb_task_end(mgb_task_1);

  for (int i = 0; i < n; ++i)
    if (std::fabs(c[i] - (a[i] + b[i])) > 1e-5f) {
      printf("FAIL at %d\n", i);
      return 1;
    }
  printf("PASS vector_add\n");
  return 0;
}
