// cuBLAS and cuFFT as written: the program allocates its matrices and signal; the libraries
// allocate their own workspaces and plans, which only the driver-level guard sees.
// Usage: guard_libraries N HOLD_MS   (prints OWN_BYTES and checks both results)
#include <cublas_v2.h>
#include <cufft.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call, what)                                            \
  do {                                                               \
    if ((call) != 0) {                                               \
      std::fprintf(stderr, "guard_libraries: %s failed\n", what);    \
      return 1;                                                      \
    }                                                                \
  } while (0)

int main(int argc, char **argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 4096;
  const int hold_ms = argc > 2 ? std::atoi(argv[2]) : 0;
  const size_t matrix = size_t(n) * n * sizeof(float);
  float *a, *b, *c;
  cufftComplex *signal;
  CHECK(cudaMalloc(&a, matrix), "cudaMalloc a");
  CHECK(cudaMalloc(&b, matrix), "cudaMalloc b");
  CHECK(cudaMalloc(&c, matrix), "cudaMalloc c");
  CHECK(cudaMalloc(&signal, size_t(n) * n * sizeof(cufftComplex)), "cudaMalloc signal");
  std::printf("OWN_BYTES %zu\n", 3 * matrix + size_t(n) * n * sizeof(cufftComplex));
  std::vector<float> ones(size_t(n) * n, 1.0f);
  CHECK(cudaMemcpy(a, ones.data(), matrix, cudaMemcpyHostToDevice), "copy a");
  CHECK(cudaMemcpy(b, ones.data(), matrix, cudaMemcpyHostToDevice), "copy b");
  cublasHandle_t blas;
  CHECK(cublasCreate(&blas), "cublasCreate");
  const float one = 1.0f, zero = 0.0f;
  CHECK(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n),
        "cublasSgemm");
  cufftHandle plan;
  CHECK(cufftPlan2d(&plan, n, n, CUFFT_C2C), "cufftPlan2d");
  CHECK(cudaMemset(signal, 0, size_t(n) * n * sizeof(cufftComplex)), "memset");
  CHECK(cufftExecC2C(plan, signal, signal, CUFFT_FORWARD), "cufftExecC2C");
  CHECK(cudaDeviceSynchronize(), "sync");
  float corner = 0;
  CHECK(cudaMemcpy(&corner, c, sizeof(float), cudaMemcpyDeviceToHost), "copy c");
  std::printf("SGEMM_CORNER %.0f (expect %d)\n", corner, n);
  if (hold_ms > 0) usleep(hold_ms * 1000);
  cufftDestroy(plan);
  cublasDestroy(blas);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaFree(signal);
  return corner == float(n) ? 0 : 1;
}
