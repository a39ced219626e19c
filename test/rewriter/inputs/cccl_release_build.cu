// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- -DNDEBUG
// RUN: %strip-checks %t/first/cccl_release_build.cu | FileCheck %s
// RUN: %golden %t %s -- -DNDEBUG
// Found by round 12 (stotko/stdgpu): any source that includes a CCCL header (thrust, CUB,
// libcu++) built with -DNDEBUG, as every CMake Release build is, did not parse. Told it was
// compiled by NVCC (the parse's __NVCC__), CCCL redeclares __assert_fail __host__ __device__
// under NDEBUG, which clang's CUDA wrapper declared __device__. The parse now lets CCCL see the
// compiler that parses it; the program's own code still sees __NVCC__.
#include <cassert>
#include <cstdio>
#include <cuda/std/cassert>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>

__global__ void square(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = i * i;
}

#ifdef __NVCC__
static const char *compiler = "nvcc";
#else
static const char *compiler = "not nvcc";
#endif

int main() {
  const int n = 1000;
  int *d;
  // CHECK: mgb_task mgb_task_1 = mgb_task_begin(
  cudaMalloc((void **)&d, n * sizeof(int));
  square<<<(n + 255) / 256, 256>>>(d, n);
  int h[n];
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  cudaFree(d);
  // CHECK: mgb_task_end(mgb_task_1);
  assert(h[3] == 9); // not evaluated under NDEBUG, as written
  thrust::device_vector<int> v(h, h + n);
  long sum = thrust::reduce(v.begin(), v.end(), 0L);
  printf("%s: sum of squares below %d = %ld\n", compiler, n, sum);
  return 0;
}
