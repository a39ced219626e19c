// libmgb overhead on a real GPU, against the same program calling CUDA directly:
//  - per task: begin -> placement -> malloc, kernel, copy back, free -> end; and its parts;
//  - per lazily replayed operation: 4 KiB host-to-device copies recorded on a stand-in, replayed
//    at the launch, versus the same copies made directly;
//  - per launch of a loop on a bound stand-in, versus launches on a real pointer.
// Needs mgbd (MGB_SOCKET). usage: runtime_bench_gpu [TASKS=500] [OPS=1000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <mgb/mgb.h>

using Clock = std::chrono::steady_clock;

#define CHECK_CUDA(call)                                                                   \
  do {                                                                                     \
    cudaError_t e = (call);                                                                \
    if (e != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (0)

__global__ void Touch(int *data) { data[threadIdx.x] += 1; }

static double Micros(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

static double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv) {
  if (argc > 1 && std::string(argv[1]) == "--help") {
    std::printf("usage: runtime_bench_gpu [TASKS=500] [OPS=1000]  (needs mgbd: MGB_SOCKET)\n");
    return 0;
  }
  int tasks = argc > 1 ? std::atoi(argv[1]) : 500;
  int ops = argc > 2 ? std::atoi(argv[2]) : 1000;
  const size_t bytes = 4 << 20;
  CHECK_CUDA(cudaFree(nullptr));  // context creation outside the measurements
  int host = 0;

  std::vector<double> direct, managed;
  for (int i = 0; i < tasks; ++i) {
    auto start = Clock::now();
    int *d;
    CHECK_CUDA(cudaMalloc(&d, bytes));
    Touch<<<1, 32>>>(d);
    CHECK_CUDA(cudaMemcpy(&host, d, sizeof host, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaFree(d));
    direct.push_back(Micros(Clock::now() - start));

    start = Clock::now();
    mgb_task task = mgb_task_begin(bytes, mgb_dim3{1, 1, 1}, mgb_dim3{32, 1, 1},
                                   (const void *)Touch, "bench:task");
    CHECK_CUDA(mgb_cudaMalloc(&d, bytes));
    Touch<<<1, 32>>>(d);
    CHECK_CUDA(mgb_cudaMemcpy(&host, d, sizeof host, cudaMemcpyDeviceToHost));
    CHECK_CUDA(mgb_cudaFree(d));
    mgb_task_end(task);
    managed.push_back(Micros(Clock::now() - start));
  }
  std::printf("per task (malloc 4 MiB, kernel, copy back, free), median of %d:\n", tasks);
  std::printf("  direct CUDA            %9.1f us\n", Median(direct));
  std::printf("  with libmgb probes     %9.1f us  (overhead %.1f us)\n", Median(managed),
              Median(managed) - Median(direct));

  // Where the per-task overhead goes: an empty task (the two mgbd round trips and libmgb's
  // bookkeeping), and each CUDA call libmgb makes at a begin or an end, alone.
  std::printf("per task, parts (median of %d):\n", tasks);
  auto median_of = [&](auto &&call) {
    std::vector<double> took;
    for (int i = 0; i < tasks; ++i) {
      auto t0 = Clock::now();
      call();
      took.push_back(Micros(Clock::now() - t0));
    }
    return Median(took);
  };
  std::printf("  empty task (begin, end) %8.1f us\n", median_of([] {
                mgb_task_end(mgb_task_begin(0, mgb_dim3{1, 1, 1}, mgb_dim3{32, 1, 1},
                                            (const void *)Touch, "bench:empty"));
              }));
  char bus_id[32];
  CHECK_CUDA(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0));
  cudaFuncAttributes attributes;
  int device = 0, count = 0;
  std::printf("  cudaFuncGetAttributes   %8.1f us\n",
              median_of([&] { (void)cudaFuncGetAttributes(&attributes, Touch); }));
  std::printf("  cudaDeviceGetByPCIBusId %8.1f us\n",
              median_of([&] { (void)cudaDeviceGetByPCIBusId(&device, bus_id); }));
  std::printf("  cudaGetDeviceCount      %8.1f us\n",
              median_of([&] { (void)cudaGetDeviceCount(&count); }));
  std::printf("  cudaSetDevice           %8.1f us\n", median_of([&] { (void)cudaSetDevice(0); }));
  std::printf("  cudaDeviceSynchronize   %8.1f us  (idle GPU)\n",
              median_of([] { (void)cudaDeviceSynchronize(); }));

  std::vector<char> chunk(4096, 3);
  char *real;
  CHECK_CUDA(cudaMalloc(&real, chunk.size() * ops));
  auto start = Clock::now();
  for (int i = 0; i < ops; ++i) {
    CHECK_CUDA(cudaMemcpy(real + i * chunk.size(), chunk.data(), chunk.size(),
                          cudaMemcpyHostToDevice));
  }
  double direct_us = Micros(Clock::now() - start) / ops;
  CHECK_CUDA(cudaFree(real));

  char *lazy;
  CHECK_CUDA(mgb_cudaMalloc(&lazy, chunk.size() * ops));  // outside a task: a stand-in
  start = Clock::now();
  for (int i = 0; i < ops; ++i) {
    CHECK_CUDA(mgb_cudaMemcpy(lazy + i * chunk.size(), chunk.data(), chunk.size(),
                              cudaMemcpyHostToDevice));
  }
  double record_us = Micros(Clock::now() - start) / ops;
  start = Clock::now();
  CHECK_CUDA(mgb_prepare(mgb_dim3{1, 1, 1}, mgb_dim3{32, 1, 1}, (const void *)Touch,
                         "bench:lazy", lazy));
  double replay_total_us = Micros(Clock::now() - start);
  Touch<<<1, 32>>>(reinterpret_cast<int *>(mgb_arg(lazy)));
  CHECK_CUDA(mgb_cudaMemcpy(&host, lazy, sizeof host, cudaMemcpyDeviceToHost));

  // A loop of launches on a stand-in already bound (buffers made in another function): each
  // launch goes through mgb_prepare and mgb_arg; against the same launches on a real pointer.
  int *plain;
  CHECK_CUDA(cudaMalloc(&plain, 32 * sizeof(int)));
  CHECK_CUDA(cudaDeviceSynchronize());
  start = Clock::now();
  for (int i = 0; i < ops; ++i) Touch<<<1, 32>>>(plain);
  CHECK_CUDA(cudaDeviceSynchronize());
  double launch_direct_us = Micros(Clock::now() - start) / ops;
  start = Clock::now();
  for (int i = 0; i < ops; ++i) {
    CHECK_CUDA(mgb_prepare(mgb_dim3{1, 1, 1}, mgb_dim3{32, 1, 1}, (const void *)Touch,
                           "bench:loop", lazy));
    Touch<<<1, 32>>>(reinterpret_cast<int *>(mgb_arg(lazy)));
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  double launch_lazy_us = Micros(Clock::now() - start) / ops;
  CHECK_CUDA(cudaFree(plain));
  CHECK_CUDA(mgb_cudaMemcpy(&host, lazy, sizeof host, cudaMemcpyDeviceToHost));
  host -= ops;  // the loop's launches each added one
  CHECK_CUDA(mgb_cudaFree(lazy));
  std::printf("per 4 KiB host-to-device copy, %d copies:\n", ops);
  std::printf("  direct cudaMemcpy      %9.2f us\n", direct_us);
  std::printf("  lazy: record           %9.2f us\n", record_us);
  std::printf("  lazy: replay at launch %9.2f us  (prepare total %.0f us incl. placement)\n",
              replay_total_us / ops, replay_total_us);
  std::printf("per launch in a loop of %d (1 block of 32 threads), issue and run:\n", ops);
  std::printf("  direct launch          %9.2f us\n", launch_direct_us);
  std::printf("  lazy: on a bound stand-in %6.2f us  (mgb_prepare + mgb_arg each time)\n",
              launch_lazy_us);
  return host == 0x03030303 + 1 ? 0 : 1;
}
