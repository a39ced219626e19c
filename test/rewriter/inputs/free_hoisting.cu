// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/free_hoisting.cu | FileCheck %s
// RUN: %golden %t %s
// Compiler guidance (rewriter/FreeHoisting.h): memory freed only after host work that no longer
// touches it (Rodinia srad_v1 writes its image out for 40 s before freeing 12 GB) is freed at its
// last use, and the task ends there. Only where nothing can tell: the pointer never escapes, the
// host work makes no CUDA call and cannot leave the block.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e = (call);                                                                        \
    if (e != cudaSuccess) {                                                                        \
      fprintf(stderr, "%s\n", cudaGetErrorString(e));                                              \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = a * (float)i;
}

static double checksum(const float *h, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += h[i];
  return s;
}

static float *kept;
static void keep(float *p) { kept = p; }

// CHECK-LABEL: double hoisted(int n)
double hoisted(int n) {
  float *h = (float *)malloc(n * sizeof(float));
  float *d, *e;
  CHECK(cudaMalloc((void **)&d, n * sizeof(float)));
  cudaMalloc((void **)&e, n * sizeof(float));
  scale<<<(n + 255) / 256, 256>>>(d, 2.0f, n);
  scale<<<(n + 255) / 256, 256>>>(e, 1.0f, n);
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  // CHECK: mgb_cudaMemcpy(h, e, n * sizeof(float), cudaMemcpyDeviceToHost);
  // CHECK-NEXT: CHECK(mgb_cudaFree(d));
  // CHECK-NEXT: mgb_cudaFree(e);
  // CHECK-NEXT: mgb_task_end(mgb_task_1);
  // CHECK-NEXT: double s = checksum(h, n);
  cudaMemcpy(h, e, n * sizeof(float), cudaMemcpyDeviceToHost);
  double s = checksum(h, n);
  for (int i = 0; i < 3; ++i)
    printf("hoisted h[%d] = %g\n", i, h[i]);
  free(h);
  // CHECK: /* mgb: freed above, at the memory's last use */ if (0) { CHECK(cudaFree(d)); }
  // CHECK-NEXT: /* mgb: freed above, at the memory's last use */ if (0) { mgb_cudaFree(e); }
  CHECK(cudaFree(d));
  cudaFree(e);
  return s;
}

// The pointer reaches a function mgb cannot follow: it may be used after the last visible use.
// CHECK-LABEL: double escapes(int n)
double escapes(int n) {
  float *h = (float *)malloc(n * sizeof(float));
  float *d;
  cudaMalloc((void **)&d, n * sizeof(float));
  keep(d);
  scale<<<(n + 255) / 256, 256>>>(d, 3.0f, n);
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  double s = checksum(h, n);
  free(h);
  // CHECK: double s = checksum(h, n);
  // CHECK-NEXT: free(h);
  // CHECK-NEXT: mgb_cudaFree(d);
  // CHECK-NEXT: mgb_task_end(
  cudaFree(d);
  return s;
}

// CUDA work between the last use and the free (a synchronize): left where it is.
// CHECK-LABEL: double cuda_between(int n)
double cuda_between(int n) {
  float *h = (float *)malloc(n * sizeof(float));
  float *d;
  cudaMalloc((void **)&d, n * sizeof(float));
  scale<<<(n + 255) / 256, 256>>>(d, 4.0f, n);
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  double s = checksum(h, n);
  cudaDeviceSynchronize();
  // CHECK: mgb_cudaDeviceSynchronize();
  // CHECK-NEXT: mgb_cudaFree(d);
  // CHECK-NEXT: mgb_task_end(
  cudaFree(d);
  free(h);
  return s;
}

// Host work that may return before the free: left where it is.
// CHECK-LABEL: double early_return(int n, bool quit)
double early_return(int n, bool quit) {
  float *h = (float *)malloc(n * sizeof(float));
  float *d;
  cudaMalloc((void **)&d, n * sizeof(float));
  scale<<<(n + 255) / 256, 256>>>(d, 5.0f, n);
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  double s = checksum(h, n);
  if (quit)
    return s;
  free(h);
  // CHECK: free(h);
  // CHECK-NEXT: mgb_cudaFree(d);
  // CHECK-NEXT: mgb_task_end(
  cudaFree(d);
  return s;
}

int main() {
  const int n = 1 << 16;
  printf("hoisted %.1f\n", hoisted(n));
  printf("escapes %.1f (kept %s)\n", escapes(n), kept ? "set" : "unset");
  printf("cuda_between %.1f\n", cuda_between(n));
  printf("early_return %.1f\n", early_return(n, false));
  return 0;
}
