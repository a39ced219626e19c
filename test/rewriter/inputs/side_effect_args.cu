// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/side_effect_args.cu | FileCheck %s
// RUN: %golden %t %s
// A lazy launch whose pointer arguments have side effects (`pool.next()`, `p++`): each must run
// once, as in the original, not once in mgb_prepare and again in the launch. The rewrite
// evaluates it into a variable before mgb_prepare and passes that variable to both.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 1.0f;
}

struct Pool {
  float *base;
  int used;
  float *next(int n) {
    float *p = base + used;
    used += n;
    return p;
  }
};

// CHECK-LABEL: void fillAll(Pool &pool, float *chunk, int n, int parts)
void fillAll(Pool &pool, float *chunk, int n, int parts) {
  // The variable is declared in braces with the launch: in a switch it must not cross a later
  // `case` label.
  // CHECK: { auto mgb_launch_arg_[[L1:[0-9]+_[0-9]+]] = pool.next(n); mgb_prepare(mgb_dim((n + 255) / 256), mgb_dim(256), (const void *)fill, "{{.*}}", mgb_launch_arg_[[L1]]); fill<<<(n + 255) / 256, 256>>>(mgb_arg(mgb_launch_arg_[[L1]]), n); }
  fill<<<(n + 255) / 256, 256>>>(pool.next(n), n);
  switch (parts) {
  case 0:
    // CHECK: { auto mgb_launch_arg_[[L3:[0-9]+_[0-9]+]] = pool.next(1); mgb_prepare({{.*}}); fill<<<1, 1>>>(mgb_arg(mgb_launch_arg_[[L3]]), 1); }
    fill<<<1, 1>>>(pool.next(1), 1);
    break;
  default:
    break;
  }
  for (int i = 0; i < parts; i++)
    // CHECK: { auto mgb_launch_arg_[[L2:[0-9]+_[0-9]+]] = chunk++; mgb_prepare({{.*}}, mgb_launch_arg_[[L2]]); fill<<<1, 1>>>(mgb_arg(mgb_launch_arg_[[L2]]), 1); }
    fill<<<1, 1>>>(chunk++, 1);
  // A pointer argument without side effects is not hoisted.
  // CHECK: mgb_prepare(mgb_dim(1), mgb_dim(1), (const void *)fill, "{{.*}}", pool.base);
  // CHECK-NEXT: fill<<<1, 1>>>(mgb_arg(pool.base), 1);
  fill<<<1, 1>>>(pool.base, 1);
}

int main() {
  const int n = 1 << 10;
  Pool pool{nullptr, 0};
  cudaMalloc((void **)&pool.base, 4 * n * sizeof(float));
  fillAll(pool, pool.base + 2 * n, n, 4);
  float first = 0;
  cudaMemcpy(&first, pool.base, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(pool.base);
  printf("used %d first %f\n", pool.used, first);
  return 0;
}
