// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %S/buffers.cu %s --
// RUN: %strip-checks %t/first/buffers.cu | FileCheck %S/buffers.cu
// RUN: %strip-checks %t/first/multi_tu.cu | FileCheck %s
// RUN: %strip-checks %t/first/buffers.cuh | FileCheck %S/buffers.cuh
// RUN: %golden %t %S/buffers.cu %s
// Pattern (multiple translation units): kernels launched on buffers from buffers.cu, a helper
// that launches on its parameters, a struct of device pointers, a global device pointer, and
// __constant__ memory written with cudaMemcpyToSymbol.
#include <cstdio>
#include <vector>

#include "buffers.cuh"

__constant__ float coeffs[2];
float *g_out = nullptr; // a device pointer kept in a global

struct Pair {
  float *in;
  float *out;
  int n;
};

__global__ void affine(Pair p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < p.n)
    p.out[i] = coeffs[0] * p.in[i] + coeffs[1];
}

__global__ void copy(float *dst, const float *src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    dst[i] = src[i];
}

static void run_affine(const Pair &p) {
  // A struct of device pointers: lazy; mgb_arg translates the stand-ins inside it.
  // CHECK: {{^ *}}mgb_prepare(mgb_dim((p.n + 255) / 256), mgb_dim(256), (const void *)affine, "multi_tu.cu:{{[0-9]+}}", p);
  // CHECK-NEXT: {{^ *}}affine<<<(p.n + 255) / 256, 256>>>(mgb_arg(p));
  affine<<<(p.n + 255) / 256, 256>>>(p);
}

static void copy_out(float *dst, const float *src, int n) {
  // Pointers from the caller: lazy.
  // CHECK: {{^ *}}mgb_prepare(mgb_dim((n + 255) / 256), mgb_dim(256), (const void *)copy, "multi_tu.cu:{{[0-9]+}}", dst, src);
  // CHECK-NEXT: {{^ *}}copy<<<(n + 255) / 256, 256>>>(mgb_arg(dst), mgb_arg(src), n);
  copy<<<(n + 255) / 256, 256>>>(dst, src, n);
}

int main() {
  const int n = 10000;
  std::vector<float> h(n), result(n);
  for (int i = 0; i < n; ++i)
    h[i] = float(i);
  const float c[2] = {2.0f, 1.0f};
  cudaMemcpyToSymbol(coeffs, c, sizeof(c));
  // CHECK: {{^ *}}mgb_cudaMemcpyToSymbol(coeffs, c, sizeof(c), 0, cudaMemcpyHostToDevice);

  Pair p;
  p.n = n;
  p.in = device_buffer(n);
  p.out = device_buffer(n);
  cudaMalloc(&g_out, n * sizeof(float));
  upload(p.in, h.data(), n);
  run_affine(p);
  copy_out(g_out, p.out, n);
  download(result.data(), g_out, n);
  cudaFree(p.in);
  cudaFree(p.out);
  // CHECK: {{^ *}}mgb_cudaMalloc(&g_out, n * sizeof(float));
  cudaFree(g_out);

  for (int i = 0; i < n; ++i)
    if (result[i] != 2.0f * i + 1.0f) {
      printf("FAIL at %d: %f\n", i, result[i]);
      return 1;
    }
  printf("PASS multi_tu\n");
  return 0;
}
