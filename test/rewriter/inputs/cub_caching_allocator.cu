// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --allow-empty
// RUN: %strip-checks %t/first/cub_caching_allocator.cu | FileCheck %s
// RUN: %golden %t %s
// CUB's caching allocator takes device memory with cudaMalloc inside CUB's own header, which is
// not rewritten, and hands it to CUB's kernels. As cub's examples do, a global allocator serves a
// two-phase DeviceReduce (temp-storage query, then the reduction) on buffers it allocated.
// No stand-in may reach that code: the header's cudaMalloc and cudaFree are routed to libmgb by
// `#define` (the memory is counted in the process's task) and the file binds eagerly.
// CHECK: #include <mgb/mgb.h>
// CHECK: #define cudaFree mgb_cudaFree
// CHECK: #define cudaMalloc mgb_cudaMalloc
// CHECK: #include <mgb/unseen_tu.h>
// CHECK-MESSAGES-NOT: warning
#include <cub/device/device_reduce.cuh>
#include <cub/util_allocator.cuh>
#include <cstdio>

cub::CachingDeviceAllocator g_allocator(true);

__global__ void fill(int *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    v[i] = i % 7;
}

int main() {
  const int n = 1 << 16;
  int *d_in = nullptr, *d_sum = nullptr;
  if (g_allocator.DeviceAllocate((void **)&d_in, sizeof(int) * n) != cudaSuccess ||
      g_allocator.DeviceAllocate((void **)&d_sum, sizeof(int)) != cudaSuccess)
    return 1;
  fill<<<(n + 255) / 256, 256>>>(d_in, n);
  void *d_temp = nullptr;
  size_t temp_bytes = 0;
  cub::DeviceReduce::Sum(d_temp, temp_bytes, d_in, d_sum, n);
  g_allocator.DeviceAllocate(&d_temp, temp_bytes);
  // Still routed as a library call (the addresses are real ones: nothing to translate).
  // CHECK: cub::DeviceReduce::Sum(mgb_arg(d_temp), temp_bytes, mgb_arg(d_in), mgb_arg(d_sum), n);
  cub::DeviceReduce::Sum(d_temp, temp_bytes, d_in, d_sum, n);
  int sum = 0;
  // CHECK: mgb_cudaMemcpy(&sum, d_sum, sizeof(int), cudaMemcpyDeviceToHost)
  cudaMemcpy(&sum, d_sum, sizeof(int), cudaMemcpyDeviceToHost);
  long long expect = 0;
  for (int i = 0; i < n; ++i)
    expect += i % 7;
  g_allocator.DeviceFree(d_temp);
  g_allocator.DeviceFree(d_in);
  g_allocator.DeviceFree(d_sum);
  std::printf("sum %d %s\n", sum, sum == expect ? "PASS" : "FAIL");
  return sum == expect ? 0 : 1;
}
