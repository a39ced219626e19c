// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/library_idioms.cu | FileCheck %s
// RUN: %golden %t %s
// C++ library idioms nvcc accepts that round 12's pools use (cuda-api-wrappers, SlabHash,
// moderngpu): each made the rewrite fail where the original builds.
#include <cstdio>
#include <ostream>
#include <sstream>
#include <cuda_runtime.h>

// A shift operator's template arguments after `operator<<` (cuda-api-wrappers' friend
// declarations) are not a launch: `operator<< <2>` stays as written.
template <int N> struct Dims;
template <int N> std::ostream &operator<<(std::ostream &os, const Dims<N> &d);
template <int N> struct Dims {
  int v[N];
  // CHECK: friend std::ostream &operator<< <N>(std::ostream &os, const Dims<N> &d);
  friend std::ostream &operator<< <N>(std::ostream &os, const Dims<N> &d);
};
template <int N> std::ostream &operator<<(std::ostream &os, const Dims<N> &d) {
  for (int i = 0; i < N; ++i)
    os << (i ? "x" : "") << d.v[i];
  return os;
}

__global__ void fill(int *x, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = v + i;
}

// A default argument added on the out-of-line definition of a member of a class template partial
// specialization (SlabHash cmap_implementation.cuh): clang's error, nvcc's silence; the parse
// tolerates it. (Clang does not give such a default to calls: a call that leaves the argument out
// still does not parse, so the calls here pass it.)
enum Kind { Small, Large };
template <typename T, Kind K> class Table;
template <typename T> class Table<T, Small> {
public:
  int sum(int n, int base);
};
template <typename T> int Table<T, Small>::sum(int n, int base = 10) {
  int *d;
  int h[64];
  // CHECK: mgb_task mgb_task_1 = mgb_task_begin(
  cudaMalloc((void **)&d, n * sizeof(int));
  fill<<<1, 64>>>(d, base, n);
  cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  int s = 0;
  for (int i = 0; i < n; ++i)
    s += h[i];
  return s;
}

// A kernel argument whose class has only a non-const copy constructor (SlabHash's contexts):
// it is evaluated once into a variable (`auto` copies it through that constructor) and mgb_arg
// hands the launch that variable as it is, which copies it as it would have.
struct Context {
  __host__ __device__ Context() : d(nullptr), n(0) {}
  __host__ __device__ Context(Context &other) : d(other.d), n(other.n) {}
  int *d;
  int n;
};
struct Holder {
  Context ctx;
  Context &get() { return ctx; }
};
__global__ void fillContext(Context c) {
  if ((int)threadIdx.x < c.n)
    c.d[threadIdx.x] = 2 * threadIdx.x;
}
static void launchContext(Holder &h) {
  // CHECK: { auto [[ARG:mgb_launch_arg_[0-9_]+]] = h.get(); mgb_prepare(
  // CHECK-SAME: fillContext<<<1, 32>>>(mgb_arg([[ARG]])); }
  fillContext<<<1, 32>>>(h.get());
}

// A launcher forwarding a parameter pack (moderngpu's cta_launch): every element goes through
// mgb_arg and the prepare sees the pack. The kernel is named with its first template argument
// only, the pack left to deduction: `(const void *)packed<3>` would name another kernel (an
// empty pack), so the prepare names none.
template <int Scale, typename... Args> __global__ void packed(int n, Args... args) {
  int *out[] = {args...};
  if ((int)threadIdx.x < n)
    out[0][threadIdx.x] = Scale * threadIdx.x;
}
template <typename... Args> void launchPacked(int n, Args... args) {
  // CHECK: mgb_prepare(mgb_dim(1), mgb_dim(32), (const void *)nullptr, "library_idioms.cu:[[@LINE+2]]", args...);
  // CHECK-NEXT: packed<3><<<1, 32>>>(n, mgb_arg(args)...);
  packed<3><<<1, 32>>>(n, args...);
}

int main() {
  std::ostringstream os;
  Dims<2> dims = {{4, 8}};
  os << dims;
  printf("dims %s\n", os.str().c_str());
  Table<int, Small> t;
  printf("sum %d %d\n", t.sum(8, 10), t.sum(8, 1));
  Holder h;
  h.ctx.n = 4;
  cudaMalloc((void **)&h.ctx.d, 4 * sizeof(int));
  launchContext(h);
  int out[4];
  cudaMemcpy(out, h.ctx.d, sizeof out, cudaMemcpyDeviceToHost);
  printf("context %d %d %d %d\n", out[0], out[1], out[2], out[3]);
  int *d;
  cudaMalloc((void **)&d, 4 * sizeof(int));
  launchPacked(4, d);
  cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost);
  printf("packed %d %d %d %d\n", out[0], out[1], out[2], out[3]);
  cudaFree(d);
  cudaFree(h.ctx.d);
  return 0;
}
