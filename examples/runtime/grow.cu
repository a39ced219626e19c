// GPU test of the allocation guard: a task that announces 1 MiB, then allocates far more. libmgb
// grows the reservation through mgbd before each allocation past it, waiting while other programs
// hold the memory. Usage: runtime_grow [CHUNKS] [CHUNK_MIB] [HOLD_MS]
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <mgb/mgb.h>

static const char *kExampleName = "runtime_grow";
#include "example_check.h"

__global__ void Fill(unsigned *data, size_t n, unsigned seed) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) data[i] = seed * 2654435761u + unsigned(i % 9973);
}

int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "--help") {
    std::printf("usage: runtime_grow [CHUNKS=4] [CHUNK_MIB=256] [HOLD_MS=0]\n");
    return 0;
  }
  int chunks = argc > 1 ? std::atoi(argv[1]) : 4;
  size_t chunk_mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 256;
  int hold_ms = argc > 3 ? std::atoi(argv[3]) : 0;
  size_t n = chunk_mib * (1 << 20) / sizeof(unsigned);
  dim3 block(256), grid(unsigned((n + 255) / 256));
  auto start = std::chrono::steady_clock::now();
  // A deliberately wrong estimate: the guard, not the probe, gets the rest.
  mgb_task task = mgb_task_begin(1 << 20, mgb_dim(grid), mgb_dim(block), (const void *)Fill,
                                 "grow.cu:task");
  std::vector<unsigned *> buffers(chunks);
  for (int c = 0; c < chunks; ++c) {
    CHECK_CUDA(mgb_cudaMalloc(&buffers[c], n * sizeof(unsigned)));
    Fill<<<grid, block>>>(buffers[c], n, unsigned(c + 1));
    CHECK_CUDA(cudaGetLastError());
  }
  double waited_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  bool ok = true;
  std::vector<unsigned> host(n);
  for (int c = 0; c < chunks; ++c) {
    CHECK_CUDA(mgb_cudaMemcpy(host.data(), buffers[c], n * sizeof(unsigned),
                              cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n && ok; i += 997) {
      ok = host[i] == unsigned(c + 1) * 2654435761u + unsigned(i % 9973);
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
  for (unsigned *buffer : buffers) CHECK_CUDA(mgb_cudaFree(buffer));
  mgb_task_end(task);
  std::printf("allocated %d x %zu MiB past a 1 MiB estimate in %.0f ms (begin to last alloc)\n",
              chunks, chunk_mib, waited_ms);
  return Verdict(kExampleName, ok);
}
