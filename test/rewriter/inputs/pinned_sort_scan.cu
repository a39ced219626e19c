// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/pinned_sort_scan.cu | FileCheck %s
// RUN: %golden %t %s
// Issue 31: pinned host buffers, device buffers made by a helper (lazy), asynchronous copies, a
// GPU sort and scan by thrust on raw device pointers, and a CPU reference (a third-party program
// of this shape crashed rewritten with stand-ins). Every call's error and cudaGetLastError() are
// checked, as the program did.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#include <cuda_runtime.h>
#include <thrust/execution_policy.h>
#include <thrust/scan.h>
#include <thrust/sort.h>

#define CHECK(call)                                                                            \
  do {                                                                                         \
    cudaError_t err_ = (call);                                                                 \
    if (err_ != cudaSuccess) {                                                                 \
      fprintf(stderr, "CUDA Runtime API error %d at %s:%d: %s\n", (int)err_, __FILE__,        \
              __LINE__, cudaGetErrorString(err_));                                             \
      exit(255);                                                                               \
    }                                                                                          \
  } while (0)

struct DeviceBuffers {
  unsigned *keys;
  unsigned *sums;
};

static DeviceBuffers make_buffers(size_t n) {
  DeviceBuffers d;
  CHECK(cudaMalloc((void **)&d.keys, n * sizeof(unsigned)));
  CHECK(cudaMalloc((void **)&d.sums, n * sizeof(unsigned)));
  CHECK(cudaGetLastError());
  return d;
}

__global__ void halve(unsigned *v, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) v[i] /= 2;
}

// CHECK-LABEL: int main(
int main() {
  const size_t n = 1 << 20;
  unsigned *pinned_in, *pinned_out;
  CHECK(cudaMallocHost((void **)&pinned_in, n * sizeof(unsigned)));
  CHECK(cudaMallocHost((void **)&pinned_out, n * sizeof(unsigned)));
  unsigned state = 12345;
  for (size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    pinned_in[i] = state >> 8;
  }
  DeviceBuffers d = make_buffers(n);
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  CHECK(cudaMemcpyAsync(d.keys, pinned_in, n * sizeof(unsigned), cudaMemcpyHostToDevice, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGetLastError());
  halve<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(d.keys, n);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(stream));
  thrust::sort(thrust::cuda::par.on(stream), d.keys, d.keys + n);
  thrust::exclusive_scan(thrust::cuda::par.on(stream), d.keys, d.keys + n, d.sums);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpyAsync(pinned_out, d.sums, n * sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaGetLastError());

  std::vector<unsigned> reference(pinned_in, pinned_in + n);
  for (unsigned &v : reference) v /= 2;
  std::sort(reference.begin(), reference.end());
  std::vector<unsigned> sums(n);
  std::exclusive_scan(reference.begin(), reference.end(), sums.begin(), 0u);
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) wrong += sums[i] != pinned_out[i];
  printf("sum[last] %u, %zu of %zu differ from the CPU reference\n", pinned_out[n - 1], wrong, n);
  CHECK(cudaStreamDestroy(stream));
  CHECK(cudaFree(d.keys));
  CHECK(cudaFree(d.sums));
  CHECK(cudaFreeHost(pinned_in));
  CHECK(cudaFreeHost(pinned_out));
  return 0;
}
