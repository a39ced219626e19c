// Kernels and their launch wrappers (darknet's src/blas_kernels.cu): the device memory comes from
// cuda.c, so their launches are lazy; sum_on_gpu works on buffers of its own (a static task).
#include "cuda.h"

__global__ void scal_kernel(int n, float alpha, float *x) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= alpha;
}

__global__ void axpy_kernel(int n, float alpha, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] += alpha * __ldcs(x + i);
}

__global__ void sum_kernel(const float *x, int n, float *out) {
  float s = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    s += x[i];
  atomicAdd(out, s);
}

extern "C" void scal_gpu(int n, float alpha, float *x) {
  scal_kernel<<<cuda_blocks(n), BLOCK>>>(n, alpha, x);
  check_error(cudaPeekAtLastError());
}

extern "C" void axpy_gpu(int n, float alpha, const float *x, float *y) {
  axpy_kernel<<<cuda_blocks(n), BLOCK>>>(n, alpha, x, y);
  check_error(cudaPeekAtLastError());
}

extern "C" float sum_on_gpu(const float *x, int n) {
  float *copy, *out, result = 0;
  check_error(cudaMalloc((void **)&copy, n * sizeof(float)));
  check_error(cudaMalloc((void **)&out, sizeof(float)));
  check_error(cudaMemcpy(copy, x, n * sizeof(float), cudaMemcpyDeviceToDevice));
  check_error(cudaMemset(out, 0, sizeof(float)));
  sum_kernel<<<1, BLOCK>>>(copy, n, out);
  check_error(cudaMemcpy(&result, out, sizeof(float), cudaMemcpyDeviceToHost));
  check_error(cudaFree(copy));
  check_error(cudaFree(out));
  return result;
}
