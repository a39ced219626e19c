// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/cccl_headers.cu | FileCheck %s
// RUN: %golden %t %s
// Found on third-party code (cuda-samples reduction): CUDA 13 keeps libcu++ (cuda/std/...),
// thrust and cub under include/cccl, which nvcc adds by itself; cooperative_groups.h includes
// <cuda/std/type_traits> from there, so the rewriter's parse must see that directory too.
// The host wrapper is a template with a switch of template launches, as in that sample.
#include <cooperative_groups.h>
#include <cuda/std/type_traits>
#include <cstdio>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

template <class T, unsigned int blockSize>
__global__ void blockSum(const T *in, T *out, unsigned int n) {
  static_assert(cuda::std::is_arithmetic<T>::value, "numbers only");
  cg::thread_block cta = cg::this_thread_block();
  __shared__ T partial[blockSize];
  unsigned int i = blockIdx.x * blockSize + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : T(0);
  cta.sync();
  if (threadIdx.x == 0) {
    T s = 0;
    for (unsigned int k = 0; k < blockSize; ++k)
      s += partial[k];
    out[blockIdx.x] = s;
  }
}

// CHECK-LABEL: void reduceBlocks(
template <class T>
void reduceBlocks(int threads, int blocks, const T *in, T *out, unsigned int n) {
  switch (threads) {
  case 256:
    // CHECK: {{^ *}}mgb_prepare(mgb_dim(blocks), mgb_dim(threads), (const void *)blockSum<T, 256>
    blockSum<T, 256>
        <<<blocks, threads>>>(in, out, n);
    break;
  case 128:
    // CHECK: {{^ *}}mgb_prepare(mgb_dim(blocks), mgb_dim(threads), (const void *)blockSum<T, 128>
    blockSum<T, 128><<<blocks, threads>>>(in, out, n);
    break;
  }
}

int main() {
  const unsigned int n = 1 << 16, threads = 256, blocks = n / threads;
  float *in, *out;
  static float host[n];
  for (unsigned int i = 0; i < n; ++i)
    host[i] = 1.0f;
  // The launches are in reduceBlocks: main's operations go through the lazy layer.
  // CHECK: {{^ *}}mgb_cudaMalloc((void **)&in
  cudaMalloc((void **)&in, n * sizeof(float));
  cudaMalloc((void **)&out, blocks * sizeof(float));
  cudaMemcpy(in, host, n * sizeof(float), cudaMemcpyHostToDevice);
  reduceBlocks<float>(threads, blocks, in, out, n);
  cudaMemcpy(host, out, blocks * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(in);
  cudaFree(out);
  int bad = 0;
  for (unsigned int b = 0; b < blocks; ++b)
    bad += host[b] != (float)threads;
  printf("%s\n", bad == 0 ? "PASS" : "FAIL");
  return bad == 0 ? 0 : 1;
}
