// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/pipeline.cu | FileCheck %s
// RUN: %golden %t %s
// Pattern: two kernels sharing a buffer merge into one task (Algorithm 1); a launch in a loop, a
// launch in a conditional, a template kernel, the `<< <` spacing, a launch spelled in a macro, a
// stream and events, and a buffer never freed (the task ends at the end of main).
#include <cstdio>
#include <vector>

#define LAUNCH_SCALE(grid, block, ptr, f, n) scale<<<grid, block>>>(ptr, f, n)

template <typename T>
__global__ void fill(T *x, T value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = value;
}

__global__ void scale(float *x, float f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= f;
}

__global__ void add_into(float *dst, const float *src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    dst[i] += src[i];
}

int main(int argc, char **argv) {
  int n = 4096;
  int rounds = argc > 5 ? 1 : 3;
  float *x, *y;
  // One task for x and y (add_into uses both); memory never freed: it ends at each return.
  // CHECK: {{^ *}}mgb_task mgb_task_1 = mgb_task_begin((size_t)(n * sizeof(float)) + (size_t)(n * sizeof(float)), mgb_dim({{.*}}), mgb_dim((static_cast<int>(128))), (const void *)fill<float>, "pipeline.cu:{{[0-9]+}}");
  // CHECK-NEXT: {{^ *}}mgb_cudaMalloc(&x, n * sizeof(float));
  // CHECK: {{^ *}}fill<float><< <blocks, threads>> >(x, 1.0f, n);
  // CHECK: {{^ *}}LAUNCH_SCALE(blocks, threads, x, 0.5f, n);
  // CHECK: {{^ *}}mgb_cudaEventRecord(start, stream);
  // CHECK: {{^ *}}scale<<<blocks, threads, 0, mgb_real_stream(stream)>>>(y, 3.0f, n);
  // CHECK: {{^ *}}mgb_cudaMemcpyAsync(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  // CHECK: {{^ *}}{ mgb_task_end(mgb_task_1); return 1; }
  // CHECK: {{^ *}}{ mgb_task_end(mgb_task_1); return 0; }
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  int threads = 128;
  int blocks = (n + threads - 1) / threads;

  fill<float><< <blocks, threads>> >(x, 1.0f, n);
  fill<<<blocks, threads>>>(y, 2.0f, n);
  for (int r = 0; r < rounds; ++r)
    add_into<<<blocks, threads>>>(x, y, n);
  if (rounds > 1)
    LAUNCH_SCALE(blocks, threads, x, 0.5f, n);

  cudaStream_t stream;
  cudaEvent_t start, stop;
  cudaStreamCreate(&stream);
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, stream);
  scale<<<blocks, threads, 0, stream>>>(y, 3.0f, n);
  cudaEventRecord(stop, stream);
  cudaStreamSynchronize(stream);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);

  std::vector<float> hx(n), hy(n);
  cudaMemcpy(hx.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpyAsync(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(stream);

  float expect_x = (1.0f + 2.0f * rounds) * (rounds > 1 ? 0.5f : 1.0f);
  for (int i = 0; i < n; ++i)
    if (hx[i] != expect_x || hy[i] != 6.0f) {
      printf("FAIL at %d: %f %f\n", i, hx[i], hy[i]);
      return 1;
    }
  printf("PASS pipeline\n");
  return 0;
}
