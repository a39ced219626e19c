// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --allow-empty
// RUN: %strip-checks %t/first/cluster_launch.cu | FileCheck %s
// RUN: %golden %t %s
// Thread-block clusters (sm_90) launched with cudaLaunchKernelEx, the C++ template and the C
// form, on buffers from an allocation helper (lazy). Both calls are renamed to libmgb's twins,
// which bind the buffers their argument values name and launch with the config's attributes as
// given (before: reported, and the whole program bound its memory eagerly).
// CHECK-MESSAGES-NOT: warning
#include <cooperative_groups.h>
#include <cstdio>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

// Each block writes its rank within its cluster after the cluster's barrier.
__global__ void ranks(int *out, int n) {
  cg::cluster_group cluster = cg::this_cluster();
  cluster.sync();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<int>(cluster.block_rank()) + 10 * static_cast<int>(cluster.num_blocks());
}

int *deviceInts(int n) {
  int *p = nullptr;
  cudaMalloc(&p, n * sizeof(int));
  cudaMemset(p, 0, n * sizeof(int));
  return p;
}

// CHECK-LABEL: int main()
int main() {
  const int n = 8 * 64;
  int *d_a = deviceInts(n), *d_b = deviceInts(n);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(8);
  config.blockDim = dim3(64);
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = 2;
  attribute[0].val.clusterDim.y = 1;
  attribute[0].val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  // CHECK: {{^ *}}cudaError_t first = mgb_cudaLaunchKernelEx(&config, ranks, d_a, n);
  cudaError_t first = cudaLaunchKernelEx(&config, ranks, d_a, n);
  int count = n;
  void *args[] = {&d_b, &count};
  attribute[0].val.clusterDim.x = 4;
  // CHECK: {{^ *}}cudaError_t second = mgb_cudaLaunchKernelExC(&config, (const void *)ranks, args);
  cudaError_t second = cudaLaunchKernelExC(&config, (const void *)ranks, args);
  int a[n], b[n];
  cudaMemcpy(a, d_a, sizeof a, cudaMemcpyDeviceToHost);
  cudaMemcpy(b, d_b, sizeof b, cudaMemcpyDeviceToHost);
  long sum_a = 0, sum_b = 0;
  for (int i = 0; i < n; ++i) {
    sum_a += a[i];
    sum_b += b[i];
  }
  printf("launches: %s %s\n", cudaGetErrorString(first), cudaGetErrorString(second));
  printf("cluster of 2: first block %d, sum %ld; cluster of 4: last block %d, sum %ld\n", a[0],
         sum_a, b[n - 1], sum_b);
  cudaFree(d_a);
  cudaFree(d_b);
  return 0;
}
