// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/managed_prefetch.cu | FileCheck %s
// RUN: %golden %t %s
// Issue 31: managed memory as a cuBLAS GEMM program uses it (a third-party one crashed rewritten):
// allocated and filled on the host, advised and prefetched to the GPU, multiplied by cuBLAS,
// prefetched back and checked on the host against a CPU reference, every call checked.
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                       \
  do {                                                                                         \
    cudaError_t err_ = (call);                                                                 \
    if (err_ != cudaSuccess) {                                                                 \
      printf("%s(%d): CUDA error %d: %s\n", __FILE__, __LINE__, (int)err_,                     \
             cudaGetErrorString(err_));                                                        \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)
#define BLAS_CHECK(call)                                                                       \
  do {                                                                                         \
    if ((call) != CUBLAS_STATUS_SUCCESS) {                                                     \
      printf("%s(%d): cuBLAS error\n", __FILE__, __LINE__);                                    \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

static void fill(float *m, int n, int seed) {
  for (int i = 0; i < n * n; ++i) m[i] = (float)((i * 7 + seed) % 11) / 11.0f;
}

// CHECK-LABEL: int main(
int main() {
  const int n = 512;
  const size_t bytes = (size_t)n * n * sizeof(float);
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  float *a, *b, *c;
  CUDA_CHECK(cudaMallocManaged(&a, bytes));
  CUDA_CHECK(cudaMallocManaged(&b, bytes));
  CUDA_CHECK(cudaMallocManaged(&c, bytes, cudaMemAttachGlobal));
  fill(a, n, 1);  // the host writes managed memory at once
  fill(b, n, 2);
  cudaMemLocation on_gpu = {};
  on_gpu.type = cudaMemLocationTypeDevice;
  on_gpu.id = device;
  cudaMemLocation on_host = {};
  on_host.type = cudaMemLocationTypeHost;
  CUDA_CHECK(cudaMemAdvise(a, bytes, cudaMemAdviseSetReadMostly, on_gpu));
  CUDA_CHECK(cudaMemAdvise(b, bytes, cudaMemAdviseSetPreferredLocation, on_gpu));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  CUDA_CHECK(cudaMemPrefetchAsync(a, bytes, on_gpu, 0, stream));
  CUDA_CHECK(cudaMemPrefetchAsync(b, bytes, on_gpu, 0, stream));
  CUDA_CHECK(cudaMemPrefetchAsync(c, bytes, on_gpu, 0, stream));

  cublasHandle_t handle;
  BLAS_CHECK(cublasCreate(&handle));
  BLAS_CHECK(cublasSetStream(handle, stream));
  const float one = 1.0f, zero = 0.0f;
  BLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n));
  CUDA_CHECK(cudaMemPrefetchAsync(c, bytes, on_host, 0, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaGetLastError());

  double worst = 0;  // a CPU reference on a few columns (column-major, as cuBLAS)
  for (int j = 0; j < n; j += 37) {
    for (int i = 0; i < n; ++i) {
      double want = 0;
      for (int k = 0; k < n; ++k) want += (double)a[k * n + i] * b[j * n + k];
      worst = fmax(worst, fabs(want - c[j * n + i]));
    }
  }
  printf("c[0] %.4f c[last] %.4f max error %s\n", c[0], c[n * n - 1], worst < 1e-2 ? "small" : "LARGE");
  BLAS_CHECK(cublasDestroy(handle));
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(b));
  CUDA_CHECK(cudaFree(c));
  return 0;
}
