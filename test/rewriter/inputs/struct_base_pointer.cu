// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/struct_base_pointer.cu | FileCheck %s
// RUN: %golden %t %s
// Found on third-party code (HeCBench tensorAccessor): a PyTorch-style accessor passed by value
// keeps its data pointer in a base class. It may hold a stand-in, so the launch is lazy and the
// accessor goes through mgb_arg (which translates stand-ins inside it), even when the launch also
// has a local device pointer that alone would make it static.
#include <cstdio>
#include <cuda_runtime.h>

template <typename T>
struct AccessorBase {
  T *data_;
  long size_;
  __host__ __device__ T &at(long i) { return data_[i]; }
};

template <typename T>
struct Accessor : AccessorBase<T> {
  Accessor(T *data, long size) { this->data_ = data; this->size_ = size; }
};

__global__ void scale(Accessor<float> a, float *out) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < a.size_)
    out[i] = 2.f * a.at(i);
}

float *shared_input; // allocated elsewhere: a stand-in when lazy

// CHECK-LABEL: int main()
int main() {
  const long n = 1024;
  cudaMalloc(&shared_input, n * sizeof(float));
  Accessor<float> acc(shared_input, n);
  float *out;
  cudaMalloc(&out, n * sizeof(float));
  // CHECK: mgb_prepare(mgb_dim(n / 256), mgb_dim(256), (const void *)scale, "struct_base_pointer.cu:{{[0-9]+}}", acc, out);
  // CHECK-NEXT: scale<<<n / 256, 256>>>(mgb_arg(acc), mgb_arg(out));
  scale<<<n / 256, 256>>>(acc, out);
  cudaFree(out);
  cudaFree(shared_input);
  return 0;
}
