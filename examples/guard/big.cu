// A program that needs GIB GiB of one GPU for HOLD_MS, as written (no mgb code): allocates it,
// fills it with a kernel, checks a few words, frees it. Exits 1 with CUDA's message when the
// allocation fails (another program has the memory).
// Usage: guard_big GIB HOLD_MS
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

__global__ void Fill(unsigned *words, size_t count) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    words[i] = unsigned(i * 2654435761u);
  }
}

int main(int argc, char **argv) {
  const double gib = argc > 1 ? std::atof(argv[1]) : 1;
  const int hold_ms = argc > 2 ? std::atoi(argv[2]) : 0;
  const size_t bytes = size_t(gib * double(size_t(1) << 30));
  unsigned *words = nullptr;
  const cudaError_t error = cudaMalloc(&words, bytes);
  if (error != cudaSuccess) {
    std::printf("guard_big: cudaMalloc of %.1f GiB failed: %s\n", gib, cudaGetErrorString(error));
    return 1;
  }
  const size_t count = bytes / sizeof(unsigned);
  Fill<<<1024, 256>>>(words, count);
  unsigned last = 0;
  cudaMemcpy(&last, words + count - 1, sizeof(last), cudaMemcpyDeviceToHost);
  if (last != unsigned((count - 1) * 2654435761u)) {
    std::printf("guard_big: wrong contents\n");
    return 1;
  }
  if (hold_ms > 0) usleep(hold_ms * 1000);
  cudaFree(words);
  std::printf("guard_big: %.1f GiB ok\n", gib);
  return 0;
}
