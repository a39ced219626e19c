// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --allow-empty
// RUN: %strip-checks %t/first/braced_launch_config.cu | FileCheck %s
// RUN: %golden %t %s
// A launch whose grid or block is a braced list, as NVIDIA's multi-GPU Jacobi samples write it
// (`<<<dim_grid, {dim_block_x, dim_block_y, 1}, 0, stream>>>`, round 11): nvcc takes the list as
// a dim3, clang's parser refuses it and the file fell back to unrewritten. The parse sees the
// list typed, `dim3{...}`, and so does the rewrite; a launch text inside a string stays as is.
// CHECK-MESSAGES-NOT: error
#include <cstdio>
#include <cuda_runtime.h>

template <int BX, int BY>
__global__ void fill(int *p, int width) {
  p[(blockIdx.y * BY + threadIdx.y) * width + blockIdx.x * BX + threadIdx.x] = 1;
}

// CHECK-LABEL: int main()
int main() {
  const int bx = 8, by = 4, gx = 2, gy = 3, width = bx * gx, n = width * by * gy;
  int *d = nullptr, h[n];
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  // CHECK: mgb_task_begin({{.*}}mgb_dim(dim3{gx, gy, 1}), mgb_dim(dim3{bx, by, 1})
  cudaMalloc(&d, sizeof h);
  // CHECK: fill<bx, by><<<dim3{gx, gy, 1}, dim3{bx, by, 1}, 0, mgb_real_stream(stream)>>>(d, width);
  fill<bx, by><<<{gx, gy, 1}, {bx, by, 1}, 0, stream>>>(d, width);
  cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  cudaFree(d);
  cudaStreamDestroy(stream);
  int ones = 0;
  for (int v : h)
    ones += v;
  // CHECK: printf("fill<<<{%d, %d}, {%d, %d}>>>: %d of %d set\n"
  printf("fill<<<{%d, %d}, {%d, %d}>>>: %d of %d set\n", gx, gy, bx, by, ones, n);
  return ones == n ? 0 : 1;
}
