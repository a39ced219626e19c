// The program's main, in C++: host buffers, the C helpers and the launch wrappers.
#include "scaler.h"

#include <cstdio>
#include <vector>

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device\n");
    return 0;
  }
  const int n = 1 << 16;
  std::vector<float> x(n, 1.0f), y(n, 2.0f);
  float *x_gpu = cuda_make_array(x.data(), n);
  float *y_gpu = cuda_make_array(y.data(), n);
  scal_gpu(n, 3.0f, x_gpu);
  axpy_gpu(n, 0.5f, x_gpu, y_gpu);
  cudaDeviceSynchronize();
  cuda_pull_array(y_gpu, y.data(), n);
  float sum = sum_on_gpu(y_gpu, n);
  cuda_free(x_gpu);
  cuda_free(y_gpu);
  bool ok = y[0] == 3.5f && sum == 3.5f * n;
  std::printf("%s y[0]=%g sum=%g\n", ok ? "PASS" : "FAIL", y[0], sum);
  return ok ? 0 : 1;
}
