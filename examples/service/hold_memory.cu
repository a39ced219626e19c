// mgb_hold_memory: allocates N GiB on the current GPU, fills it with a kernel, checks it, holds it
// a few seconds, frees it. The GPU demo of scripts/gpu/service.sh (two 100 GB programs on one
// H200 crash without mgbd, and both finish under `mgb run --mem 100G`).
//   mgb_hold_memory --gb N [--seconds S]      exit 0: PASS, 2: out of memory, 1: other failure
//   mgb_hold_memory --context-only [--seconds S]   creates the CUDA context only (cudaFree(0))
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

__global__ void Fill(unsigned long long *data, size_t count) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    data[i] = i * 0x9E3779B97F4A7C15ull;
  }
}

__global__ void Check(const unsigned long long *data, size_t count, unsigned long long *bad) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    if (data[i] != i * 0x9E3779B97F4A7C15ull) atomicAdd(bad, 1ull);
  }
}

int Usage() {
  std::fprintf(stderr,
               "usage: mgb_hold_memory --gb N [--seconds S]\n"
               "       mgb_hold_memory --context-only [--seconds S]\n");
  return 1;
}

}  // namespace

int main(int argc, char **argv) {
  double gib = 0;
  int seconds = 3;
  bool context_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0) {
      Usage();
      return 0;
    } else if (std::strcmp(argv[i], "--gb") == 0 && i + 1 < argc) {
      gib = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--context-only") == 0) {
      context_only = true;
    } else {
      std::fprintf(stderr, "mgb_hold_memory: bad argument '%s'\n", argv[i]);
      return Usage();
    }
  }
  if (context_only) {
    if (cudaError_t e = cudaFree(nullptr); e != cudaSuccess) {
      std::fprintf(stderr, "mgb_hold_memory: cudaFree(0): %s\n", cudaGetErrorString(e));
      return 1;
    }
    std::printf("context ready\n");
    std::fflush(stdout);
    sleep(static_cast<unsigned>(seconds));
    return 0;
  }
  if (gib <= 0) return Usage();
  const size_t bytes = static_cast<size_t>(gib * (1ull << 30));
  const size_t count = bytes / sizeof(unsigned long long);
  unsigned long long *data = nullptr, *bad = nullptr;
  if (cudaError_t e = cudaMalloc(&data, bytes); e != cudaSuccess) {
    std::printf("FAIL cudaMalloc %.1f GiB: %s\n", gib, cudaGetErrorString(e));
    return e == cudaErrorMemoryAllocation ? 2 : 1;
  }
  if (cudaMalloc(&bad, sizeof *bad) != cudaSuccess || cudaMemset(bad, 0, sizeof *bad) != cudaSuccess) {
    std::printf("FAIL cudaMalloc of the counter\n");
    return 2;
  }
  Fill<<<1024, 256>>>(data, count);
  Check<<<1024, 256>>>(data, count, bad);
  unsigned long long wrong = 0;
  if (cudaError_t e = cudaMemcpy(&wrong, bad, sizeof wrong, cudaMemcpyDeviceToHost); e != cudaSuccess) {
    std::printf("FAIL kernel: %s\n", cudaGetErrorString(e));
    return 1;
  }
  if (wrong != 0) {
    std::printf("FAIL %llu words differ\n", wrong);
    return 1;
  }
  int device = 0;
  cudaGetDevice(&device);
  std::printf("PASS filled and checked %.1f GiB on device %d; holding %d s\n", gib, device, seconds);
  std::fflush(stdout);
  sleep(static_cast<unsigned>(seconds));
  cudaFree(bad);
  cudaFree(data);
  return 0;
}
