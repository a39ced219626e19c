// A launch configuration given as a braced list (NVIDIA/multi-gpu-programming-models' jacobi.cu,
// `<<<dim_grid, {dim_block_x, dim_block_y, 1}, 0, stream>>>`): nvcc compiles it, clang's parser
// refuses it. The drivers compile the file as written and say what to write instead.
#include <cuda_runtime.h>

__global__ void fill(int *p) { p[threadIdx.y * blockDim.x + threadIdx.x] = 1; }

void fillTile(int *p, cudaStream_t stream) {
  fill<<<1, {8, 8, 1}, 0, stream>>>(p);
}
