// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --allow-empty
// RUN: %strip-checks %t/first/cache_hints.cu | FileCheck %s
// RUN: %golden %t %s
// CHECK-MESSAGES-NOT: error:
// Golden test cache_hints: device intrinsics and macros nvcc 13 has and clang 19's host-side parse
// lacked; each made the whole file unparsable ("no matching function for call to '__stcs'"):
// cache-hinted loads and stores on the built-in and vector types, surface object functions, the
// cooperative-groups cluster API, float2 arithmetic (sm_100), aligned device malloc and
// __CUDACC_VER_MAJOR__. The host code around them is rewritten as usual.
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <surface_indirect_functions.h>

#if __CUDACC_VER_MAJOR__ < 11
#error "needs CUDA 11 or newer"
#endif

namespace cg = cooperative_groups;

// CHECK: #include <mgb/mgb.h>

__global__ void stream_scale(const float *in, float *out, const float4 *in4, float4 *out4,
                             float2 *f2, double *d, int *i, unsigned long long *u, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n)
    return;
  __stcs(out + t, 2.0f * __ldcs(in + t));
  float4 v = __ldcg(in4 + t);
  v.x += __ldca(in + t) + __ldlu(in + t) + __ldcv(in + t) + __ldg(in + t);
  __stcg(out4 + t, v);
  __stwb(f2 + t, __ldcs(f2 + t));
  __stwt(d + t, __ldcg(d + t) * 2.0);
  __stcs(i + t, __ldca(i + t) + 1);
  __stcg(u + t, __ldlu(u + t) + 1ull);
}

__global__ void half_hints(__half *h, __half2 *h2, __nv_bfloat16 *b, __nv_bfloat162 *b2) {
  int t = threadIdx.x;
  __stcs(h + t, __ldcs(h + t));
  __stwt(h2 + t, __ldcg(h2 + t));
  __stcg(b + t, __ldca(b + t));
  __stcs(b2 + t, __ldlu(b2 + t));
}

__global__ void surfaces(cudaSurfaceObject_t surf, float *out) {
  float v = surf2Dread<float>(surf, threadIdx.x * sizeof(float), 0);
  float w;
  surf2Dread(&w, surf, 0, 0);
  surf2Dwrite(v + w, surf, threadIdx.x * sizeof(float), 0);
  out[threadIdx.x] = v;
}

__global__ void __cluster_dims__(2, 1, 1) cluster_rank(unsigned *rank, float2 *f2) {
  cg::cluster_group cluster = cg::this_cluster();
  rank[blockIdx.x] = cluster.block_rank();
  cluster.sync();
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 1000
  f2[0] = __fmul2_rn(__fadd2_rn(f2[0], f2[1]), __ffma2_rz(f2[0], f2[1], f2[2]));
#endif
  void *scratch = __nv_aligned_device_malloc(64, 16);
  free(scratch);
}

// CHECK-LABEL: int main(
// CHECK: mgb_task mgb_task_1 = mgb_task_begin((size_t)(n * sizeof(float)) + (size_t)(n * sizeof(float)), mgb_dim(n / 256), mgb_dim(256), (const void *)stream_scale, "cache_hints.cu:{{[0-9]+}}");
// CHECK: mgb_cudaMalloc(&in, n * sizeof(float));
// CHECK: mgb_cudaFree(out);
// CHECK-NEXT: mgb_task_end(mgb_task_1);
int main() {
  const int n = 1 << 20;
  float *in, *out;
  cudaMalloc(&in, n * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  cudaMemset(in, 0, n * sizeof(float));
  stream_scale<<<n / 256, 256>>>(in, out, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, n);
  cudaDeviceSynchronize();
  cudaFree(in);
  cudaFree(out);
  return 0;
}
