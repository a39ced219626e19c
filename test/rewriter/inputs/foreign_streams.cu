// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --allow-empty
// RUN: %strip-checks %t/first/foreign_streams.cu | FileCheck %s
// RUN: %golden %t %s
// CHECK-MESSAGES-NOT: warning
// Found on third-party code (cuda-samples simpleCallback, UnifiedMemoryStreams): a stream made
// by cudaStreamCreate (a libmgb stand-in once rewritten) passed to a CUDA runtime function
// without an mgb twin (cudaStreamAddCallback, cudaLaunchHostFunc, cudaStreamAttachMemAsync) or
// to a CUDA library (cublasSetStream). Those would get the stand-in itself: the argument is
// wrapped in mgb_real_stream(), as launch streams are. The default stream (0) is left alone.
// Each cuBLAS call is reported on stderr: its GPU work is outside libmgb.
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>

__global__ void inc(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += 1;
}

void CUDART_CB done(cudaStream_t stream, cudaError_t status, void *data) {
  *static_cast<int *>(data) = 1;
}

void hostFn(void *data) { *static_cast<int *>(data) += 1; }

struct Work {
  cudaStream_t stream;
  int flag = 0;
};

int main() {
  const int n = 1024;
  Work w;
  cudaStream_t s;
  // CHECK: mgb_cudaStreamCreate(&w.stream);
  cudaStreamCreate(&w.stream);
  cudaStreamCreate(&s);
  int *m;
  cudaMallocManaged(&m, n * sizeof(int));
  // CHECK: cudaStreamAttachMemAsync(mgb_real_stream(s), m, 0, cudaMemAttachSingle);
  cudaStreamAttachMemAsync(s, m, 0, cudaMemAttachSingle);
  // CHECK: inc<<<(n + 255) / 256, 256, 0, mgb_real_stream(s)>>>
  inc<<<(n + 255) / 256, 256, 0, s>>>(m, n);
  // CHECK: cudaStreamAddCallback(mgb_real_stream(w.stream), done, &w.flag, 0);
  cudaStreamAddCallback(w.stream, done, &w.flag, 0);
  // CHECK: cudaLaunchHostFunc(mgb_real_stream(s), hostFn, &w.flag);
  cudaLaunchHostFunc(s, hostFn, &w.flag);
  // CHECK: cudaLaunchHostFunc(0, hostFn, &w.flag);
  cudaLaunchHostFunc(0, hostFn, &w.flag);
  cublasHandle_t handle;
  cublasCreate(&handle);
  // CHECK: cublasSetStream(handle, mgb_real_stream(s));
  cublasSetStream(handle, s);
  cublasDestroy(handle);
  cudaStreamSynchronize(s);
  cudaFree(m);
  printf("%d\n", w.flag);
  return 0;
}
