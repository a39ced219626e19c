// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --implicit-check-not='works on the GPU'
// RUN: %strip-checks %t/first/pointer_arrays.cu | FileCheck %s
// RUN: %golden %t %s
// Found on third-party code (HeCBench batched cuBLAS programs): a batched library call takes a
// device array of device pointers, built on the host from cudaMalloc'd pointers and copied to
// the device. The pointers in that array must be real on the device: libmgb translates the
// stand-ins in a host array copied into device memory (into a real array directly, or at replay
// for a recorded copy), binding the matrices to the array's task. Two shapes: the array in the
// function of the call (a static task), and the array made by a helper (lazy).
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CHECK(call)                                                                            \
  do {                                                                                         \
    if ((call) != 0) {                                                                         \
      printf("error at line %d\n", __LINE__);                                                  \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

static const int kN = 16, kBatch = 6;

static std::vector<float *> make_matrices(float seed) {
  std::vector<float *> d(kBatch);
  std::vector<float> h(kN * kN);
  for (int b = 0; b < kBatch; ++b) {
    for (int i = 0; i < kN * kN; ++i)
      h[i] = seed + (float)((i * 7 + b) % 5) + (i % (kN + 1) == 0 ? 8.f : 0.f);
    CHECK(cudaMalloc((void **)&d[b], kN * kN * sizeof(float)));
    CHECK(cudaMemcpy(d[b], h.data(), kN * kN * sizeof(float), cudaMemcpyHostToDevice));
  }
  return d;
}

// A device array of the matrices' pointers, made by a helper.
static float **device_array(const std::vector<float *> &matrices) {
  float **d_array;
  CHECK(cudaMalloc((void **)&d_array, matrices.size() * sizeof(float *)));
  CHECK(cudaMemcpy(d_array, matrices.data(), matrices.size() * sizeof(float *),
                   cudaMemcpyHostToDevice));
  return d_array;
}

static double sum_of(const std::vector<float *> &matrices) {
  std::vector<float> h(kN * kN);
  double sum = 0;
  for (float *d : matrices) {
    CHECK(cudaMemcpy(h.data(), d, kN * kN * sizeof(float), cudaMemcpyDeviceToHost));
    for (float v : h)
      sum += v;
  }
  return sum;
}

// The arrays in this function: real memory of its task; the matrices, made before it began, are
// stand-ins until the copies bind them.
// CHECK-LABEL: static double batched_gemm(
// CHECK: mgb_task_begin(
static double batched_gemm(cublasHandle_t handle, const std::vector<float *> &A,
                           const std::vector<float *> &B, const std::vector<float *> &C) {
  float **d_A, **d_B, **d_C;
  CHECK(cudaMalloc((void **)&d_A, kBatch * sizeof(float *)));
  CHECK(cudaMalloc((void **)&d_B, kBatch * sizeof(float *)));
  CHECK(cudaMalloc((void **)&d_C, kBatch * sizeof(float *)));
  CHECK(cudaMemcpy(d_A, A.data(), kBatch * sizeof(float *), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_B, B.data(), kBatch * sizeof(float *), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_C, C.data(), kBatch * sizeof(float *), cudaMemcpyHostToDevice));
  const float one = 1.f, zero = 0.f;
  // CHECK-NOT: mgb_arg(d_A)
  // CHECK: cublasSgemmBatched(
  // CHECK-MESSAGES: pointer_arrays.cu:[[@LINE+1]]:{{[0-9]+}}: warning: library handle created outside the task
  CHECK(cublasSgemmBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &one,
                           (const float **)d_A, kN, (const float **)d_B, kN, &zero, d_C, kN,
                           kBatch));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(d_A));
  CHECK(cudaFree(d_B));
  CHECK(cudaFree(d_C));
  return sum_of(C);
}

// The array from a helper (a recorded copy, translated when it is replayed): LU factorisation of
// each matrix in place, with its pivots and infos.
static int batched_lu(cublasHandle_t handle, const std::vector<float *> &A) {
  float **d_LU = device_array(A);
  int *d_pivots, *d_info;
  CHECK(cudaMalloc((void **)&d_pivots, kN * kBatch * sizeof(int)));
  CHECK(cudaMalloc((void **)&d_info, kBatch * sizeof(int)));
  // CHECK: mgb_prepare(mgb_dim(1), mgb_dim(1), nullptr, "pointer_arrays.cu:{{[0-9]+}}", d_LU);
  // CHECK-NEXT: CHECK(cublasSgetrfBatched(handle, kN, mgb_arg(d_LU), kN, d_pivots, d_info, kBatch));
  // CHECK-MESSAGES: pointer_arrays.cu:[[@LINE+1]]:{{[0-9]+}}: warning: library handle created outside the task
  CHECK(cublasSgetrfBatched(handle, kN, d_LU, kN, d_pivots, d_info, kBatch));
  std::vector<int> info(kBatch);
  CHECK(cudaMemcpy(info.data(), d_info, kBatch * sizeof(int), cudaMemcpyDeviceToHost));
  int singular = 0;
  for (int i : info)
    singular += i != 0;
  CHECK(cudaFree(d_pivots));
  CHECK(cudaFree(d_info));
  CHECK(cudaFree(d_LU));
  return singular;
}

int main() {
  cublasHandle_t handle;
  CHECK(cublasCreate(&handle));
  std::vector<float *> A = make_matrices(1.f), B = make_matrices(0.5f), C = make_matrices(0.f);
  double gemm = batched_gemm(handle, A, B, C);
  int singular = batched_lu(handle, A);
  double lu = sum_of(A);

  // The same products on the host.
  double expected = 0;
  for (int b = 0; b < kBatch; ++b)
    for (int r = 0; r < kN; ++r)
      for (int c = 0; c < kN; ++c) {
        double s = 0;
        for (int k = 0; k < kN; ++k) {
          int ia = r + k * kN, ib = k + c * kN;
          double a = 1.0 + (ia * 7 + b) % 5 + (ia % (kN + 1) == 0 ? 8 : 0);
          double bb = 0.5 + (ib * 7 + b) % 5 + (ib % (kN + 1) == 0 ? 8 : 0);
          s += a * bb;
        }
        expected += s;
      }
  printf("batched gemm sum %.1f (expected %.1f)\n", gemm, expected);
  printf("batched LU: %d singular, factor sum %.3f\n", singular, lu);
  for (float *d : A)
    CHECK(cudaFree(d));
  for (float *d : B)
    CHECK(cudaFree(d));
  for (float *d : C)
    CHECK(cudaFree(d));
  CHECK(cublasDestroy(handle));
  bool ok = gemm == expected && singular == 0;
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
