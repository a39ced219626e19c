// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --allow-empty
// RUN: %strip-checks %t/first/nvcc_accepts.cu | FileCheck %s
// RUN: %golden %t %s
// Code nvcc compiles that the rewrite once broke (third-party round 7):
// - a kernel taking a managed object by reference (the unified-memory blog's Kernel_by_ref): the
//   argument was wrapped in mgb_arg(), a copy no non-const reference binds to;
// - a kernel template handed to a CUB utility by its template-id (cub::MaxSmOccupancy in CUB's
//   block examples): taken for device memory and wrapped in mgb_arg(), which cannot deduce it;
// - time() called without <time.h> (nvcc's implicit cuda_runtime.h declares it; clang's parse
//   did not: the file fell back to unrewritten);
// - members declared without target attributes and defined out of line __device__ (the CUDA
//   Handbook's spin lock, round 14): nvcc warns (#20039) and makes them __host__ __device__;
//   clang found no declaration for the definitions and the file fell back to unrewritten;
// - a launcher's __restrict__ pointer parameters passed to a kernel (multi-gpu-programming-models'
//   Jacobi, round 15): mgb_arg and mgb_prepare did not compile for a restrict-qualified pointer;
// - a member of a dependent base called unqualified in a __host__ __device__ member that only a
//   kernel instantiates (cudaKDTree's candidate lists, round 15): nvcc's front end accepts it and
//   its host compile never instantiates it; clang's parse rejected it;
// - the built-in variables declared again for the host pass with the types nvcc's host compile
//   gives them (ccminer's cuda_helper.h, round 16, for editors): clang declares them with types
//   of its own and rejected the file.
// CHECK-MESSAGES-NOT: error
#include <cstdio>
#include <cub/util_device.cuh>

struct Managed {
  void *operator new(size_t n) {
    void *p;
    cudaMallocManaged(&p, n);
    cudaDeviceSynchronize();
    return p;
  }
  void operator delete(void *p) {
    cudaDeviceSynchronize();
    cudaFree(p);
  }
};
struct Counter : public Managed {
  int value;
};

__global__ void bump(Counter &c) { c.value++; }

// CHECK-LABEL: void bumpTwice(Counter &c)
void bumpTwice(Counter &c) {
  // CHECK-NOT: mgb_arg
  // CHECK: {{^ *}}bump<<<1, 1>>>(c);
  bump<<<1, 1>>>(c);
  bump<<<1, 1>>>(c);
  cudaDeviceSynchronize();
}

template <int THREADS>
__global__ void fill(int *out) {
  out[threadIdx.x] = THREADS;
}

// CHECK-LABEL: int occupancyThenFill()
template <int THREADS>
int occupancyThenFill() {
  int *d = nullptr;
  cudaMalloc(&d, THREADS * sizeof(int));
  int occupancy = 0;
  // CHECK: cub::MaxSmOccupancy(occupancy, fill<THREADS>, THREADS);
  cub::MaxSmOccupancy(occupancy, fill<THREADS>, THREADS);
  fill<THREADS><<<1, THREADS>>>(d);
  int h = 0;
  cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  return occupancy > 0 ? h : -1;
}

struct Tally {
  explicit Tally(int *slot);
  void add(int v) const;
  int *slot_;
};
__device__ Tally::Tally(int *slot) : slot_(slot) {}
__device__ void Tally::add(int v) const { atomicAdd(slot_, v); }

__global__ void tallyThreads(int *slot) {
  Tally tally(slot);
  tally.add(threadIdx.x);
}

// CHECK-LABEL: int sumOfThreadIndices(int threads)
int sumOfThreadIndices(int threads) {
  int *d = nullptr;
  // CHECK: mgb_task_begin
  cudaMalloc(&d, sizeof(int));
  cudaMemset(d, 0, sizeof(int));
  tallyThreads<<<1, threads>>>(d);
  int h = 0;
  cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  return h;
}

__global__ void fillOnes(float *__restrict__ const a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    a[i] = 1.0f;
}

struct Decoder {
protected:
  __host__ __device__ float decode(unsigned long long v) const { return (float)v; }
};
template <int K>
struct Entries : public Decoder {
  using Decoder::decode;
  unsigned long long entry[K];
};
template <int K>
struct Candidates : public Entries<K> {
  using Entries<K>::entry;
  __host__ __device__ float first() const;
};
template <int K>
__host__ __device__ float Candidates<K>::first() const {
  return decode(entry[0]);
}

__global__ void firstCandidate(float *out) {
  Candidates<4> c;
  c.entry[0] = 5;
  *out = c.first();
}

// CHECK-LABEL: float decodeOnDevice()
float decodeOnDevice() {
  float *d = nullptr;
  // CHECK: mgb_task_begin
  cudaMalloc(&d, sizeof(float));
  firstCandidate<<<1, 1>>>(d);
  float h = 0;
  cudaMemcpy(&h, d, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  return h;
}

// CHECK-LABEL: void launchFillOnes(float *__restrict__ const a, int n)
void launchFillOnes(float *__restrict__ const a, int n) {
  // CHECK: mgb_prepare(
  // CHECK: fillOnes<<<(n + 127) / 128, 128>>>(mgb_arg(a), n);
  fillOnes<<<(n + 127) / 128, 128>>>(a, n);
}

float sumOfOnes(int n) {
  float *d = nullptr;
  cudaMalloc(&d, n * sizeof(float));
  launchFillOnes(d, n);
  float *h = new float[n];
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost);
  float sum = 0;
  for (int i = 0; i < n; ++i)
    sum += h[i];
  delete[] h;
  cudaFree(d);
  return sum;
}

#ifndef __CUDA_ARCH__
extern const dim3 blockDim;
extern const uint3 threadIdx;
#endif

__global__ void blockSize(int *out) { out[threadIdx.x] = blockDim.x; }

// CHECK-LABEL: int blockSizeOnDevice()
int blockSizeOnDevice() {
  int *d = nullptr;
  // CHECK: mgb_task_begin
  cudaMalloc(&d, 32 * sizeof(int));
  blockSize<<<1, 32>>>(d);
  int h = 0;
  cudaMemcpy(&h, d + 31, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(d);
  return h;
}

int main() {
  srand(static_cast<unsigned>(time(NULL)));
  Counter *c = new Counter;
  c->value = 40;
  bumpTwice(*c);
  printf("counter %d (expect 42), fill %d (expect 128)\n", c->value, occupancyThenFill<128>());
  delete c;
  printf("tally %d (expect 28)\n", sumOfThreadIndices(8));
  printf("ones %.0f (expect 1000)\n", sumOfOnes(1000));
  printf("decoded %.0f (expect 5)\n", decodeOnDevice());
  printf("block size %d (expect 32)\n", blockSizeOnDevice());
  return 0;
}
