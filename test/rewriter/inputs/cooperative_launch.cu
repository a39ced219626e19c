// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --allow-empty
// RUN: %strip-checks %t/first/cooperative_launch.cu | FileCheck %s
// RUN: %golden %t %s
// Found on third-party code (pattern: grid-sync reduction with cooperative groups, buffers
// from an allocation helper). cudaLaunchCooperativeKernel reaches its argument values through
// the `args` array, so before real addresses stand-ins reached the kernel. Now the call is renamed
// to libmgb's twin, which binds the buffers the values name (the kernel's parameter sizes come
// from CUDA) and launches with the values as they are, however the array was filled: no warning.
// CHECK-MESSAGES-NOT: warning
#include <cooperative_groups.h>
#include <cstdio>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__global__ void total(const int *in, int *out, int n) {
  cg::grid_group grid = cg::this_grid();
  for (int i = grid.thread_rank(); i < n; i += grid.size())
    atomicAdd(out, in[i]);
  grid.sync();
}

int *deviceBuffer(int n) {
  int *p = nullptr;
  cudaMalloc(&p, n * sizeof(int));
  cudaMemset(p, 0, n * sizeof(int));
  return p;
}

// CHECK-LABEL: int main()
int main() {
  int n = 1024;
  int *d_in = deviceBuffer(n), *d_out = deviceBuffer(1);
  void *args[] = {(void *)&d_in, &d_out, &n};
  // CHECK: {{^ *}}mgb_cudaLaunchCooperativeKernel((void *)total, 8, 128, args, 0, 0);
  cudaLaunchCooperativeKernel((void *)total, 8, 128, args, 0, 0);
  void *later[3];
  later[0] = &d_in;
  later[1] = &d_out;
  later[2] = &n;
  // The template form takes the kernel itself, and defaults its last two arguments.
  // CHECK: {{^ *}}mgb_cudaLaunchCooperativeKernel(total, dim3(8), dim3(128), later, 0, 0);
  cudaLaunchCooperativeKernel(total, dim3(8), dim3(128), later);
  int sum = 0;
  cudaMemcpy(&sum, d_out, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d_in);
  cudaFree(d_out);
  printf("%d\n", sum);
  return 0;
}
