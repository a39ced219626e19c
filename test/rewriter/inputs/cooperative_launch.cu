// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr
// RUN: %strip-checks %t/first/cooperative_launch.cu | FileCheck %s
// RUN: %golden %t %s
// Found on third-party code (pattern: grid-sync reduction with cooperative groups, buffers
// from an allocation helper). cudaLaunchCooperativeKernel has no mgb twin and its argument values
// sit behind the `args` array, so stand-ins reached the kernel. A local `{&a, &b}` array is
// replaced by one of translated values after an mgb_prepare (braced with the call); an array
// filled otherwise is reported on stderr.
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
  // CHECK: {{^ *}}{ mgb_prepare(mgb_dim(8), mgb_dim(128), (const void *)((void *)total), "cooperative_launch.cu:{{[0-9]+}}", d_in, d_out, n); auto [[V:mgb_coop_[0-9_]+]]_0 = mgb_arg(d_in); auto [[V]]_1 = mgb_arg(d_out); auto [[V]]_2 = mgb_arg(n); void *[[V]][] = {&[[V]]_0, &[[V]]_1, &[[V]]_2}; cudaLaunchCooperativeKernel((void *)total, 8, 128, [[V]], 0, 0); }
  cudaLaunchCooperativeKernel((void *)total, 8, 128, args, 0, 0);
  void *later[3];
  later[0] = &d_in;
  later[1] = &d_out;
  later[2] = &n;
  // CHECK: {{^ *}}cudaLaunchCooperativeKernel((void *)total, 8, 128, later, 0, 0);
  // CHECK-MESSAGES: cooperative_launch.cu:[[@LINE+1]]:{{[0-9]+}}: warning: cudaLaunchCooperativeKernel has no mgb twin and its arguments are not
  cudaLaunchCooperativeKernel((void *)total, 8, 128, later, 0, 0);
  int sum = 0;
  cudaMemcpy(&sum, d_out, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d_in);
  cudaFree(d_out);
  printf("%d\n", sum);
  return 0;
}
