// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --implicit-check-not='works on the GPU'
// RUN: %strip-checks %t/first/library_views.cu | FileCheck %s
// RUN: %golden %t %s
// Found on third-party code (a one-file LLM trainer, HeCBench cuBLAS programs): device memory
// reaches a CUDA library from outside the function that calls it, so the call must bind and
// translate it (a stand-in must never reach cuBLAS). Three shapes:
//  - buffers made and filled by a helper with no kernel launch, then cublasSgeam in main;
//  - one allocation sliced into a struct of tensors (an arena of views: base + offset), kernels
//    launched through small wrappers, cuBLAS on the views inside a wrapper;
//  - host-only library calls (status strings, handle creation) that run nothing on the GPU and
//    are neither routed nor reported.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                                       \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__);                  \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)
#define CUBLAS_CHECK(call)                                                                     \
  do {                                                                                         \
    cublasStatus_t s_ = (call);                                                                \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
      printf("cuBLAS error %s at line %d\n", cublasGetStatusString(s_), __LINE__);             \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

// ---- an arena of views --------------------------------------------------------------------------
#define NUM_TENSORS 3
struct Params {
  float *w1; // hidden x in   (column-major)
  float *b1; // hidden
  float *w2; // out x hidden
};

static float *alloc_and_point(Params *p, const size_t *sizes) {
  size_t total = 0;
  for (int i = 0; i < NUM_TENSORS; ++i)
    total += sizes[i];
  float *memory;
  CUDA_CHECK(cudaMalloc((void **)&memory, total * sizeof(float)));
  float **ptrs[] = {&p->w1, &p->b1, &p->w2};
  float *it = memory;
  for (int i = 0; i < NUM_TENSORS; ++i) {
    *ptrs[i] = it;
    it += sizes[i];
  }
  return memory;
}

__global__ void fill_kernel(float *x, int n, float scale) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = scale * (float)(i % 7 - 3);
}

__global__ void add_bias_kernel(float *out, const float *bias, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows * cols)
    out[i] += bias[i % rows];
}

static void fill(float *x, int n, float scale) {
  fill_kernel<<<(n + 127) / 128, 128>>>(x, n, scale);
}

static void add_bias(float *out, const float *bias, int rows, int cols) {
  add_bias_kernel<<<(rows * cols + 127) / 128, 128>>>(out, bias, rows, cols);
}

// out (rows x cols) = w (rows x k) * in (k x cols), cuBLAS on views of the arena.
// CHECK-LABEL: static void matmul(
static void matmul(cublasHandle_t handle, float *out, const float *w, const float *in, int rows,
                   int k, int cols) {
  const float one = 1.f, zero = 0.f;
  // CHECK: mgb_prepare(mgb_dim(1), mgb_dim(1), nullptr, "library_views.cu:{{[0-9]+}}", w, in, out);
  // CHECK-NEXT: CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, rows, cols, k, &one, mgb_arg(w), rows, mgb_arg(in), k, &zero,
  // CHECK-NEXT: mgb_arg(out), rows));
  CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, rows, cols, k, &one, w, rows, in, k, &zero,
                           out, rows));
}

// ---- buffers made by a function with no kernel launch ---------------------------------------------
static void make_matrix(float **d, int rows, int cols, float seed) {
  std::vector<float> h(rows * cols);
  for (int i = 0; i < rows * cols; ++i)
    h[i] = seed + (float)(i % 11);
  CUDA_CHECK(cudaMalloc((void **)d, rows * cols * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(*d, h.data(), rows * cols * sizeof(float), cudaMemcpyHostToDevice));
}

static double geam_sum(cublasHandle_t handle) {
  const int m = 64, n = 48;
  float *d_A, *d_B, *d_C;
  make_matrix(&d_A, m, n, 1.f);
  make_matrix(&d_B, m, n, 2.f);
  CUDA_CHECK(cudaMalloc((void **)&d_C, m * n * sizeof(float)));
  const float alpha = 2.f, beta = -1.f;
  // d_C is this function's memory (a static task); d_A and d_B come from make_matrix.
  // CHECK: mgb_prepare(mgb_dim(1), mgb_dim(1), nullptr, "library_views.cu:{{[0-9]+}}", d_A, d_B);
  // CHECK-NEXT: CUBLAS_CHECK(cublasSgeam(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, &alpha, mgb_arg(d_A), m, &beta, mgb_arg(d_B), m, d_C, m));
  // CHECK-MESSAGES: library_views.cu:[[@LINE+1]]:{{[0-9]+}}: warning: library handle created outside the task
  CUBLAS_CHECK(cublasSgeam(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, &alpha, d_A, m, &beta, d_B, m, d_C, m));
  std::vector<float> C(m * n);
  CUDA_CHECK(cudaMemcpy(C.data(), d_C, m * n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float c : C)
    sum += c;
  CUDA_CHECK(cudaFree(d_A));
  CUDA_CHECK(cudaFree(d_B));
  CUDA_CHECK(cudaFree(d_C));
  return sum;
}

int main() {
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  printf("cuBLAS: %s\n", cublasGetStatusString(CUBLAS_STATUS_SUCCESS));

  // 2 * (1 + i%11) - (2 + i%11) = i % 11, summed over 64 * 48 elements.
  double expected_geam = 0;
  for (int i = 0; i < 64 * 48; ++i)
    expected_geam += i % 11;
  double got_geam = geam_sum(handle);
  printf("geam sum %.1f (expected %.1f)\n", got_geam, expected_geam);

  const int in_dim = 32, hidden = 16, out_dim = 8, batch = 4;
  size_t sizes[NUM_TENSORS] = {(size_t)hidden * in_dim, (size_t)hidden, (size_t)out_dim * hidden};
  Params p;
  float *arena = alloc_and_point(&p, sizes);
  fill(p.w1, (int)sizes[0], 0.01f);
  fill(p.b1, (int)sizes[1], 0.5f);
  fill(p.w2, (int)sizes[2], 0.02f);
  float *acts;
  CUDA_CHECK(cudaMalloc((void **)&acts, (in_dim + hidden + out_dim) * batch * sizeof(float)));
  float *x = acts, *h1 = acts + in_dim * batch, *y = h1 + hidden * batch;
  fill(x, in_dim * batch, 1.f);
  matmul(handle, h1, p.w1, x, hidden, in_dim, batch);
  add_bias(h1, p.b1, hidden, batch);
  matmul(handle, y, p.w2, h1, out_dim, hidden, batch);
  std::vector<float> out(out_dim * batch);
  CUDA_CHECK(cudaMemcpy(out.data(), y, out.size() * sizeof(float), cudaMemcpyDeviceToHost));

  // The same network on the host.
  auto value = [](int i, float scale) { return scale * (float)(i % 7 - 3); };
  std::vector<double> hx(in_dim * batch), hh(hidden * batch), hy(out_dim * batch);
  for (int i = 0; i < in_dim * batch; ++i)
    hx[i] = value(i, 1.f);
  for (int c = 0; c < batch; ++c)
    for (int r = 0; r < hidden; ++r) {
      double s = 0;
      for (int k = 0; k < in_dim; ++k)
        s += value(r + k * hidden, 0.01f) * hx[k + c * in_dim];
      hh[r + c * hidden] = s + value(r, 0.5f);
    }
  for (int c = 0; c < batch; ++c)
    for (int r = 0; r < out_dim; ++r) {
      double s = 0;
      for (int k = 0; k < hidden; ++k)
        s += value(r + k * out_dim, 0.02f) * hh[k + c * hidden];
      hy[r + c * out_dim] = s;
    }
  double err = 0, checksum = 0;
  for (int i = 0; i < out_dim * batch; ++i) {
    err = fmax(err, fabs(out[i] - hy[i]));
    checksum += out[i];
  }
  printf("network checksum %.4f, max error %s\n", checksum, err < 1e-3 ? "small" : "LARGE");
  CUDA_CHECK(cudaFree(acts));
  CUDA_CHECK(cudaFree(arena));
  CUBLAS_CHECK(cublasDestroy(handle));
  bool ok = got_geam == expected_geam && err < 1e-3;
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
