// The program's main calls no CUDA itself: the mgb_ references of the program are all inside
// libgpu.a's members, so only nm on the archive tells the link that it needs libmgb.
#include <cstdio>

#include "gpu.h"

int main() {
  const int n = 1000;
  float *a = gpu_alloc(n);
  float *b = gpu_scratch(n);
  if (!a || !b) return 1;
  gpu_fill(a, n, 1.0f);
  gpu_fill(b, n, 2.0f);
  gpu_add(a, b, n);
  gpu_scale(a, n, 2.0f);
  int sum = gpu_pull_sum(a, n);
  gpu_scratch_release(b);
  gpu_release(a);
  std::printf("%d\n", sum);
  return sum == 6 * n ? 0 : 1;
}
