// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --implicit-check-not=warning:
// RUN: %strip-checks %t/first/thrust_use.cu | FileCheck %s
// RUN: %golden %t %s
// thrust keeps its device memory and launches its kernels inside CUDA's own headers, which are not
// rewritten. Its allocations there are routed to libmgb by `#define` (counted in the process's
// task) and the file makes the program bind its memory eagerly, so no stand-in can reach thrust's
// kernels; one warning, at the first thrust use, says so. Hand-written launches on
// raw_pointer_cast(...) go lazy; a task of the program's own cudaMalloc memory stays static.
// CHECK: #include <mgb/mgb.h>
// CHECK: #define cudaFree mgb_cudaFree
// CHECK: #define cudaMalloc mgb_cudaMalloc
// CHECK: #include <mgb/unseen_tu.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <thrust/transform.h>
#include <cstdio>

struct saxpy {
  float a;
  __host__ __device__ float operator()(float x, float y) const { return a * x + y; }
};

__global__ void square(float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    v[i] = v[i] * v[i];
}

// In a function template the argument's type is dependent: raw_pointer_cast counts as a library
// call on memory from outside the function, and the launch hoists the argument that holds it.
// The hoisted copy takes the library call's edit along (round 17, miniFE: the two edits
// overlapped and the file was not rewritten).
// CHECK-LABEL: template <typename T> void squareAll(thrust::device_vector<T> &v)
template <typename T> void squareAll(thrust::device_vector<T> &v) {
  // CHECK: mgb_prepare(mgb_dim(1), mgb_dim(1), nullptr, "thrust_use.cu:{{[0-9]+}}", &v[0]);
  // CHECK-NEXT: { auto mgb_launch_arg_[[B:[0-9]+_[0-9]+]] = thrust::raw_pointer_cast(mgb_arg(&v[0])); {{.*}}mgb_prepare({{.*}}, mgb_launch_arg_[[B]],
  // CHECK-NEXT: square<<<{{.*}}>>>(mgb_arg(mgb_launch_arg_[[B]]),
  square<<<((int)v.size() + 255) / 256, 256>>>(thrust::raw_pointer_cast(&v[0]), (int)v.size());
}

int main() {
  const int n = 1 << 12;
  thrust::host_vector<float> hx(n);
  for (int i = 0; i < n; ++i)
    hx[i] = (float)(i % 10);
  thrust::device_vector<float> x = hx;
  thrust::device_vector<float> y(n, 1.0f);
  // (Reported at the first thrust call: the matchers see calls before the containers.)
  // CHECK-MESSAGES: thrust_use.cu:[[@LINE+1]]:{{[0-9]+}}: warning: thrust takes device memory and launches kernels inside its own headers: libmgb counts that memory in one task for the whole process, and the program binds its memory eagerly
  thrust::transform(x.begin(), x.end(), y.begin(), y.begin(), saxpy{2.0f});
  // A call argument may have side effects: evaluated once, into a variable (docs/rewriter.md).
  // CHECK: { auto mgb_launch_arg_[[A:[0-9]+_[0-9]+]] = thrust::raw_pointer_cast(y.data()); mgb_prepare(mgb_dim((n + 255) / 256), mgb_dim(256), (const void *)square, "thrust_use.cu:{{[0-9]+}}", mgb_launch_arg_[[A]]); square<<<(n + 255) / 256, 256>>>(mgb_arg(mgb_launch_arg_[[A]]), n); }
  square<<<(n + 255) / 256, 256>>>(thrust::raw_pointer_cast(y.data()), n);
  float total = thrust::reduce(y.begin(), y.end());
  squareAll(x);
  float squares = thrust::reduce(x.begin(), x.end());

  float *raw;
  // CHECK: mgb_task mgb_task_1 = mgb_task_begin((size_t)(n * sizeof(float)),
  cudaMalloc(&raw, n * sizeof(float));
  thrust::sequence(thrust::device, raw, raw + n);
  square<<<(n + 255) / 256, 256>>>(raw, n);
  float last;
  cudaMemcpy(&last, raw + n - 1, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(raw);
  // CHECK: mgb_task_end(mgb_task_1);

  double expect = 0, expectSquares = 0;
  for (int i = 0; i < n; ++i) {
    expect += (2.0 * (i % 10) + 1.0) * (2.0 * (i % 10) + 1.0);
    expectSquares += (i % 10) * (i % 10);
  }
  bool ok = total == (float)expect && squares == (float)expectSquares &&
            last == (float)(n - 1) * (n - 1);
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}

// A stream handed to thrust through par.on(s) is translated like a launch stream.
// CHECK-LABEL: float sumOnStream(const float *d, int n)
float sumOnStream(const float *d, int n) {
  cudaStream_t s;
  cudaStreamCreate(&s);
  // Its raw device pointers come from the caller: bound and translated at the call.
  // CHECK: mgb_prepare(mgb_dim(1), mgb_dim(1), nullptr, "thrust_use.cu:{{[0-9]+}}", d, d + n);
  // CHECK-NEXT: thrust::reduce(thrust::cuda::par.on(mgb_real_stream(s)), mgb_arg(d), mgb_arg(d + n));
  float sum = thrust::reduce(thrust::cuda::par.on(s), d, d + n);
  cudaStreamDestroy(s);
  return sum;
}
