// What an allocation and a free cost through the guard: ITER allocation/free pairs of BYTES, by
// cudaMalloc/cudaFree and by cudaMallocAsync/cudaFreeAsync (a stream-ordered pool: the driver's
// cheapest path, so the guard's share shows most), timed apart. Run plain and under `mgb run`
// (within its grant: no grow); scripts/gpu/guard.sh alternates the two and takes medians.
// Usage: guard_cost ITER BYTES   prints "malloc_us A free_us F async_us B free_async_us G"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

using Clock = std::chrono::steady_clock;

template <typename Alloc, typename Free>
bool Time(int iterations, Alloc alloc, Free release, double *alloc_us, double *free_us) {
  std::vector<void *> blocks(64);
  double alloc_s = 0, free_s = 0;
  int done = 0;
  for (; done < iterations; done += int(blocks.size())) {
    auto t0 = Clock::now();
    for (void *&p : blocks) {
      if (!alloc(&p)) return false;
    }
    auto t1 = Clock::now();
    for (void *p : blocks) release(p);
    auto t2 = Clock::now();
    alloc_s += std::chrono::duration<double>(t1 - t0).count();
    free_s += std::chrono::duration<double>(t2 - t1).count();
  }
  *alloc_us = alloc_s / done * 1e6;
  *free_us = free_s / done * 1e6;
  return true;
}

int main(int argc, char **argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 2048;
  const size_t bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : (1 << 20);
  cudaFree(nullptr);  // the context, outside the timing
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  double malloc_us = 0, free_us = 0, async_us = 0, free_async_us = 0;
  const bool ok =
      Time(iterations, [&](void **p) { return cudaMalloc(p, bytes) == cudaSuccess; },
           [](void *p) { cudaFree(p); }, &malloc_us, &free_us) &&
      Time(iterations, [&](void **p) { return cudaMallocAsync(p, bytes, stream) == cudaSuccess; },
           [&](void *p) { cudaFreeAsync(p, stream); }, &async_us, &free_async_us);
  cudaStreamSynchronize(stream);
  if (!ok) {
    std::printf("guard_cost: an allocation failed\n");
    return 1;
  }
  std::printf("malloc_us %.3f free_us %.3f async_us %.3f free_async_us %.3f (%d pairs of %zu bytes each)\n",
              malloc_us, free_us, async_us, free_async_us, iterations, bytes);
  return 0;
}
