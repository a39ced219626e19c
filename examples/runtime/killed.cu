// GPU test: a program killed mid-task. `runtime_killed hold MIB` begins a task of MIB, fills it,
// prints "holding" and sleeps (the script kills it with SIGKILL); `runtime_killed verify MIB` then
// needs the same memory: it is placed only if mgbd freed the killed program's reservation.
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <mgb/mgb.h>

static const char *kExampleName = "runtime_killed";
#include "example_check.h"

__global__ void Iota(int *data, size_t n) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (i < n) data[i] = int(i % 100003);
}

int main(int argc, char **argv) {
  if (argc != 3 || (std::string(argv[1]) != "hold" && std::string(argv[1]) != "verify")) {
    std::printf("usage: runtime_killed hold|verify MIB\n");
    return argc == 2 && std::string(argv[1]) == "--help" ? 0 : 2;
  }
  bool hold = std::string(argv[1]) == "hold";
  size_t n = std::strtoull(argv[2], nullptr, 10) * (1 << 20) / sizeof(int);
  dim3 block(256), grid(unsigned((n + 255) / 256));
  mgb_task task = mgb_task_begin(n * sizeof(int), mgb_dim(grid), mgb_dim(block),
                                 (const void *)Iota, hold ? "killed.cu:hold" : "killed.cu:verify");
  int *data;
  CHECK_CUDA(mgb_cudaMalloc(&data, n * sizeof(int)));
  Iota<<<grid, block>>>(data, n);
  CHECK_CUDA(mgb_cudaDeviceSynchronize());
  if (hold) {
    std::printf("holding\n");
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::minutes(10));  // killed before this ends
    return 1;
  }
  std::vector<int> host(n);
  CHECK_CUDA(mgb_cudaMemcpy(host.data(), data, n * sizeof(int), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (size_t i = 0; i < n && ok; i += 101) ok = host[i] == int(i % 100003);
  CHECK_CUDA(mgb_cudaFree(data));
  mgb_task_end(task);
  return Verdict(kExampleName, ok);
}
