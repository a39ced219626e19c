// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/allocation_sinking.cu | FileCheck %s
// RUN: %golden %t %s
// Compiler guidance (rewriter/AllocationSinking.h), the mirror of free hoisting: memory allocated
// before host work that does not touch it (Rodinia srad_v2 allocates 52 GB, then makes its image
// on the host) is held from its first use: the begin moves down past the work, the allocations
// above it get reserved addresses, and the begin binds them to the task. Only where nothing can
// tell: the host work neither uses the pointers nor calls CUDA nor leaves the block, and the
// begin can read the sizes where it goes.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e = (call);                                                                        \
    if (e != cudaSuccess) {                                                                        \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e));                    \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

__global__ void scale(float *x, const float *y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = a * y[i];
}

__global__ void fill(float *x, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = v + (float)i;
}

static void make_input(float *h, int n) {
  for (int i = 0; i < n; ++i)
    h[i] = (float)std::exp(-(double)i / n);
}

static double checksum(const float *h, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i)
    s += h[i];
  return s;
}

// srad_v2's shape: both allocations, then the input made on the host, then the first copy.
// CHECK-LABEL: double sunk(int n)
double sunk(int n) {
  int size = n;
  float *h = (float *)malloc(size * sizeof(float));
  float *d_in, *d_out;
  // CHECK: CHECK(cudaMalloc((void **)&d_in, sizeof(float) * size));
  // CHECK-NEXT: mgb_cudaMalloc((void **)&d_out, sizeof(float) * size);
  CHECK(cudaMalloc((void **)&d_in, sizeof(float) * size));
  cudaMalloc((void **)&d_out, sizeof(float) * size);
  printf("making the input\n");
  make_input(h, size);
  for (int i = 0; i < 4; ++i)
    h[i] += 1.0f;
  // CHECK: mgb_task mgb_task_1 = mgb_task_begin((size_t)(sizeof(float) * size) + (size_t)(sizeof(float) * size), mgb_dim((size + 127) / 128), mgb_dim(128), (const void *)scale, "allocation_sinking.cu:[[@LINE+4]]");
  // CHECK-NEXT: { const void *mgb_task_1_memory[] = {d_in, d_out}; mgb_prepare_pointers("allocation_sinking.cu:[[@LINE+3]]", 2, mgb_task_1_memory); }
  // CHECK-NEXT: mgb_cudaMemcpy(d_in, h, sizeof(float) * size, cudaMemcpyHostToDevice);
  cudaMemcpy(d_in, h, sizeof(float) * size, cudaMemcpyHostToDevice);
  scale<<<(size + 127) / 128, 128>>>(d_out, d_in, 3.0f, size);
  cudaMemcpy(h, d_out, sizeof(float) * size, cudaMemcpyDeviceToHost);
  cudaFree(d_in);
  cudaFree(d_out);
  // CHECK: mgb_task_end(mgb_task_1);
  double s = checksum(h, size);
  free(h);
  return s;
}

// The first use is a launch, not a copy: the begin's binding makes the memory real for it.
// CHECK-LABEL: double launch_first(int n)
double launch_first(int n) {
  float *d;
  float *h = (float *)malloc(n * sizeof(float));
  cudaMalloc((void **)&d, n * sizeof(float));
  make_input(h, n);
  // CHECK: mgb_task mgb_task_2 = mgb_task_begin(
  // CHECK-NEXT: { const void *mgb_task_2_memory[] = {d}; mgb_prepare_pointers(
  // CHECK-NEXT: fill<<<(n + 255) / 256, 256>>>(d, h[0], n);
  fill<<<(n + 255) / 256, 256>>>(d, h[0], n);
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  double s = checksum(h, n);
  free(h);
  return s;
}

// Nothing but declarations between the allocation and the first use: the begin stays.
// CHECK-LABEL: double no_work(int n)
double no_work(int n) {
  float *h = (float *)malloc(n * sizeof(float));
  make_input(h, n);
  float *d;
  // CHECK: mgb_task mgb_task_3 = mgb_task_begin(
  // CHECK-NEXT: mgb_cudaMalloc((void **)&d, n * sizeof(float));
  // CHECK-NOT: mgb_task_3_memory
  cudaMalloc((void **)&d, n * sizeof(float));
  dim3 block(256);
  dim3 grid((n + 255) / 256);
  cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<grid, block>>>(d, d, 0.5f, n);
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  double s = checksum(h, n);
  free(h);
  return s;
}

// The host work names the pointer (here, prints whether it is set): the begin stays.
// CHECK-LABEL: double pointer_used(int n)
double pointer_used(int n) {
  float *h = (float *)malloc(n * sizeof(float));
  float *d = NULL;
  // CHECK: mgb_task mgb_task_4 = mgb_task_begin(
  // CHECK-NEXT: mgb_cudaMalloc((void **)&d, n * sizeof(float));
  // CHECK-NOT: mgb_task_4_memory
  cudaMalloc((void **)&d, n * sizeof(float));
  printf("pointer_used: d is %s\n", d ? "set" : "null");
  make_input(h, n);
  cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<(n + 255) / 256, 256>>>(d, d, 2.0f, n);
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  double s = checksum(h, n);
  free(h);
  return s;
}

// The size is written by the host work: the begin cannot read the allocation's size there.
// CHECK-LABEL: double size_written(int n)
double size_written(int n) {
  size_t bytes = n * sizeof(float);
  float *h = (float *)malloc(n * sizeof(float));
  float *d;
  // CHECK: mgb_task mgb_task_5 = mgb_task_begin(
  // CHECK-NEXT: mgb_cudaMalloc((void **)&d, bytes);
  // CHECK-NOT: mgb_task_5_memory
  cudaMalloc((void **)&d, bytes);
  make_input(h, n);
  bytes = 0;
  cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<(n + 255) / 256, 256>>>(d, d, 4.0f, n);
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  double s = checksum(h, n) + (double)bytes;
  free(h);
  return s;
}

// A CUDA call in the host work (a synchronize): the begin goes no further than it.
// CHECK-LABEL: double cuda_between(int n)
double cuda_between(int n) {
  float *h = (float *)malloc(n * sizeof(float));
  float *d;
  // CHECK: mgb_task mgb_task_6 = mgb_task_begin(
  // CHECK-NEXT: mgb_cudaMalloc((void **)&d, n * sizeof(float));
  // CHECK-NOT: mgb_task_6_memory
  cudaMalloc((void **)&d, n * sizeof(float));
  cudaDeviceSynchronize();
  make_input(h, n);
  cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<(n + 255) / 256, 256>>>(d, d, 5.0f, n);
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  double s = checksum(h, n);
  free(h);
  return s;
}

// The size is declared inside the allocating block: out of scope further down, the begin stays.
// CHECK-LABEL: double nested_size(int n)
double nested_size(int n) {
  float *h = (float *)malloc(n * sizeof(float));
  float *d;
  // CHECK: mgb_task mgb_task_7 = mgb_task_begin(
  // CHECK-NOT: mgb_task_7_memory
  {
    size_t bytes = n * sizeof(float);
    cudaMalloc((void **)&d, bytes);
  }
  make_input(h, n);
  cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);
  scale<<<(n + 255) / 256, 256>>>(d, d, 6.0f, n);
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  double s = checksum(h, n);
  free(h);
  return s;
}

int main() {
  const int n = 1 << 20;
  printf("sunk %.3f\n", sunk(n));
  printf("launch_first %.1f\n", launch_first(n));
  printf("no_work %.3f\n", no_work(n));
  printf("pointer_used %.3f\n", pointer_used(n));
  printf("size_written %.3f\n", size_written(n));
  printf("cuda_between %.3f\n", cuda_between(n));
  printf("nested_size %.3f\n", nested_size(n));
  return 0;
}
