// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/best_device.cu | FileCheck %s
// RUN: %golden %t %s
// Pattern: the program picks "the device with most SMs" itself and works in a helper function
// that allocates and frees in a loop of batches (a static task per batch iteration).
#include <cstdio>
#include <vector>

__global__ void square(int *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    v[i] = v[i] * v[i];
}

static int pick_best_device() {
  int count = 0, best = 0, best_sms = -1;
  cudaGetDeviceCount(&count);
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, d);
    if (prop.multiProcessorCount > best_sms) {
      best_sms = prop.multiProcessorCount;
      best = d;
    }
  }
  // Recorded by the runtime, never obeyed: mgbd picks the GPU.
  // CHECK: {{^ *}}mgb_cudaSetDevice(best);
  cudaSetDevice(best);
  return best;
}

static bool run_batches(int batches, int n) {
  std::vector<int> h(n);
  for (int b = 0; b < batches; ++b) {
    for (int i = 0; i < n; ++i)
      h[i] = i + b;
    int *d = nullptr;
    // A static task per iteration: alloc, launch and free all inside the loop body.
    // CHECK: {{^ *}}mgb_task mgb_task_1 = mgb_task_begin((size_t)(n * sizeof(int)), mgb_dim((n + 127) / 128), mgb_dim(128), (const void *)square, "best_device.cu:{{[0-9]+}}");
    // CHECK-NEXT: {{^ *}}mgb_cudaMalloc(&d, n * sizeof(int));
    // CHECK: {{^ *}}mgb_cudaFree(d);
    // CHECK-NEXT: {{^ *}}mgb_task_end(mgb_task_1);
    cudaMalloc(&d, n * sizeof(int));
    cudaMemcpy(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice);
    square<<<(n + 127) / 128, 128>>>(d, n);
    cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d);
    for (int i = 0; i < n; ++i)
      if (h[i] != (i + b) * (i + b))
        return false;
  }
  return true;
}

int main() {
  int device = pick_best_device();
  printf("program chose device %d (mgbd decides under mgb)\n", device);
  bool ok = run_batches(4, 3000);
  cudaDeviceSynchronize();
  printf(ok ? "PASS best_device\n" : "FAIL best_device\n");
  return ok ? 0 : 1;
}
