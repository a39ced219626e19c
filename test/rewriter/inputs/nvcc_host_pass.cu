// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --allow-empty
// RUN: %strip-checks %t/first/nvcc_host_pass.cu | FileCheck %s
// RUN: %golden %t %s
// Code nvcc compiles that the rewrite broke (third-party round 8, a CUDA textbook's programs):
// - an intrinsics header included by name (<sm_61_intrinsics.h> for __dp4a): clang's CUDA
//   wrapper already holds its functions, and the parse failed on their redefinition;
// - a kernel declared only under `#ifdef __NVCC__` and launched before its definition: nvcc
//   defines __NVCC__ in its host pass, the parse did not (an undeclared identifier);
// - a kernel and a host function of one name: `(const void *)name` in the probe could not pick
//   one, and nvcc rejected the rewrite. The probe names no kernel then (it is optional).
// CHECK-MESSAGES-NOT: error
#include <cstdio>
#include <sm_61_intrinsics.h>

#ifdef __NVCC__
__global__ void scale(float *p, float f);
#endif

__global__ void dot4(const int *a, const int *b, int *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    c[i] = __dp4a(a[i], b[i], 0);
}

// CHECK-LABEL: float scaledSum(int n)
float scaledSum(int n) {
  float *d;
  cudaMalloc(&d, n * sizeof(float));
  cudaMemset(d, 0, n * sizeof(float));
  // CHECK: mgb_task_begin({{.*}}(const void *)scale, "nvcc_host_pass.cu:{{[0-9]+}}");
  scale<<<(n + 127) / 128, 128>>>(d, 2.0f);
  float first;
  cudaMemcpy(&first, d, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  return first;
}

__global__ void scale(float *p, float f) { p[blockIdx.x * blockDim.x + threadIdx.x] += f; }

__global__ void square(int *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    v[i] *= v[i];
}

// CHECK-LABEL: int square(int x)
int square(int x) {
  int *d;
  cudaMalloc(&d, sizeof(int));
  cudaMemcpy(d, &x, sizeof(int), cudaMemcpyHostToDevice);
  // CHECK: mgb_task_begin({{.*}}(const void *)nullptr, "nvcc_host_pass.cu:{{[0-9]+}}");
  square<<<1, 1>>>(d, 1);
  cudaMemcpy(&x, d, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  return x;
}

int main() {
  const int n = 256;
  int ha[n], hb[n], hc[n];
  for (int i = 0; i < n; ++i) {
    ha[i] = 0x01010101 * (i % 5);
    hb[i] = 0x01020304;
  }
  int *a, *b, *c;
  cudaMalloc(&a, sizeof(ha));
  cudaMalloc(&b, sizeof(hb));
  cudaMalloc(&c, sizeof(hc));
  cudaMemcpy(a, ha, sizeof(ha), cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb, sizeof(hb), cudaMemcpyHostToDevice);
  dot4<<<(n + 127) / 128, 128>>>(a, b, c, n);
  cudaMemcpy(hc, c, sizeof(hc), cudaMemcpyDeviceToHost);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  long long sum = 0;
  bool ok = true;
  for (int i = 0; i < n; ++i) {
    sum += hc[i];
    ok = ok && hc[i] == (i % 5) * (1 + 2 + 3 + 4);
  }
  const float s = scaledSum(n);
  const int q = square(7);
  ok = ok && s == 2.0f && q == 49;
  std::printf("dot4 sum %lld, scaled %.1f, square %d: %s\n", sum, s, q, ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
