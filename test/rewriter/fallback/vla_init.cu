// A translation unit nvcc compiles and clang 19 cannot parse: an initialized variable-length
// array in host code (a GNU extension g++ and nvcc accept; clang: "variable-sized object may not
// be initialized"). A host-code error, so the parse still fails on it (device-only errors do not:
// shared_init.cu). mgb-nvcc must compile it as written, loudly, with -include mgb/unseen_tu.h
// (test: rewriter.driver_fallback).
#include <cstdio>
#include <cuda_runtime.h>

float scale_sum(float *d, int n, float a); // ok.cu

int first_count(int n) {
  int counts[n + 1] = {0};
  return counts[0];
}

int main() {
  const int n = 1024;
  float *d, sum = 0;
  cudaMalloc(&d, n * sizeof(float));
  cudaMemset(d, 0, n * sizeof(float));
  sum += scale_sum(d, n, 2.0f) + first_count(n);
  cudaFree(d);
  std::printf("%g\n", sum);
  return 0;
}
