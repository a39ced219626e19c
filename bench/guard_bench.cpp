// The guard's own work per allocation and free (guard/src/guarded_driver.h), on the CPU: a driver
// that answers at once, with and without the guard around it, so the difference is the guard's
// counting (two atomics, a table insert and erase). The GPU figures (scripts/gpu/guard.sh) add
// the real driver's noise on top. Usage: mgb_guard_bench [PAIRS] [THREADS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "guard_budget.h"
#include "guarded_driver.h"

using namespace mgb::guard;

namespace {

std::atomic<CUdeviceptr> g_next{0x1000};
CUresult InstantAlloc(CUdeviceptr *p, size_t bytes) {
  *p = g_next.fetch_add(bytes);
  return kCudaSuccess;
}
CUresult InstantFree(CUdeviceptr) { return kCudaSuccess; }

// Nanoseconds per allocation+free pair, over `threads` threads each doing `pairs` of them.
double TimePairs(GuardedDriver &driver, int pairs, int threads) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      std::vector<CUdeviceptr> held(64);
      for (int done = 0; done < pairs; done += 64) {
        for (CUdeviceptr &p : held) driver.MemAlloc(&p, 1 << 20);
        for (CUdeviceptr p : held) driver.MemFree(p);
      }
    });
  }
  for (auto &w : workers) w.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return seconds / (double(pairs) * threads) * 1e9;
}

}  // namespace

int main(int argc, char **argv) {
  const int pairs = argc > 1 ? std::atoi(argv[1]) : 1 << 20;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  RealDriver real;
  real.mem_alloc = InstantAlloc;
  real.mem_free = InstantFree;
  LedgerCounters counters;
  counters.gpu[0].reserved = uint64_t{1} << 62;  // never grows: the common case
  GuardBudget budget(
      counters, [](uint64_t, uint32_t) { return GrowAnswer{}; }, false);
  GuardedDriver plain(real, nullptr), guarded(real, &budget);
  for (int round = 0; round < 3; ++round) {
    const double bare = TimePairs(plain, pairs, threads);
    const double counted = TimePairs(guarded, pairs, threads);
    std::printf(
        "round %d, %d thread(s): driver alone %.1f ns, with the guard %.1f ns per "
        "allocation+free pair: the guard adds %.1f ns\n",
        round + 1, threads, bare, counted, counted - bare);
  }
  return 0;
}
