// The allocation guard: past the reservation, grow through mgbd (waiting) before allocating.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "runtime_fixture.h"

using namespace mgb::test;
using mgb::runtime::kDefaultHeapBytes;

namespace {
const mgb_dim3 kOne{1, 1, 1};
}

TEST_CASE("an allocation past the reservation grows it first", "[runtime][guard]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  mgb_task task = m.runtime->TaskBegin(kMiB, kOne, kOne, nullptr, "guard.cu:1");
  void *small = nullptr, *big = nullptr;
  REQUIRE(m.runtime->Malloc(&small, kMiB) == cudaSuccess);
  CHECK(m.runtime->ReservedBytes(task) == kMiB + kDefaultHeapBytes);  // fits: no growth
  REQUIRE(m.runtime->Malloc(&big, 10 * kMiB) == cudaSuccess);
  CHECK(m.runtime->ReservedBytes(task) == 11 * kMiB + kDefaultHeapBytes);
  CHECK(mgbd.Status().tasks(0).memory_bytes() == 11 * kMiB + kDefaultHeapBytes);
  // Freed memory is reused without asking again.
  REQUIRE(m.runtime->Free(big) == cudaSuccess);
  REQUIRE(m.runtime->Malloc(&big, 10 * kMiB) == cudaSuccess);
  CHECK(m.runtime->ReservedBytes(task) == 11 * kMiB + kDefaultHeapBytes);
  m.runtime->Free(big);
  m.runtime->Free(small);
  m.runtime->TaskEnd(task);
}

TEST_CASE("growth blocks until another program frees memory", "[runtime][guard]") {
  MgbdProcess mgbd({64 * kMiB});
  auto other = mgb::Client::Connect(mgbd.socket(), 1, "other");
  REQUIRE(other.ok());
  auto held = (*other)->TaskBegin(40 * kMiB, mgb::LaunchShape{}, "other");
  REQUIRE(held.ok());

  ManagedRuntime m(mgbd, 1);
  mgb_task task = m.runtime->TaskBegin(kMiB, kOne, kOne, nullptr, "grow");  // 9 MiB with heap
  REQUIRE(task != 0);
  std::atomic<bool> allocated{false};
  cudaError_t result = cudaErrorUnknown;
  auto start = std::chrono::steady_clock::now();
  double malloc_ms = 0;
  std::thread grower([&] {
    void *p = nullptr;
    mgb_task t = m.runtime->TaskBegin(kMiB, kOne, kOne, nullptr, "grow-thread");
    const auto malloc_start = std::chrono::steady_clock::now();
    result = m.runtime->Malloc(&p, 30 * kMiB);  // 9 + 9 + 29 more > 64 - 40: must wait
    malloc_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - malloc_start)
            .count();
    allocated = true;
    m.runtime->Free(p);
    m.runtime->TaskEnd(t);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CHECK_FALSE(allocated.load());  // waiting, not failing and not over-committing
  CHECK(m.fake.CallsNamed("Malloc").empty());
  REQUIRE((*other)->TaskEnd(held->task_id).ok());
  grower.join();
  CHECK(allocated.load());
  CHECK(result == cudaSuccess);
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(400));
  m.runtime->TaskEnd(task);
  // The wait is on the clock libmgb prints at exit (MGB_WAIT_MS): one grow, timed within the
  // Malloc that waited for it (how long depends on when the thread got to it: not asserted).
  double begin_ms = -1, grow_ms = -1;
  unsigned long long begins = 0, grows = 0;
  const std::string line = m.runtime->Waits().Line();
  INFO(line);
  REQUIRE(std::sscanf(line.c_str(), "MGB_WAIT_MS begin=%lf grow=%lf begins=%llu grows=%llu",
                      &begin_ms, &grow_ms, &begins, &grows) == 4);
  CHECK(begins == 2);
  CHECK(grows == 1);
  CHECK(grow_ms > 0);
  CHECK(grow_ms <= malloc_ms + 0.1);  // + the line's rounding to 0.1 ms
}

TEST_CASE("a growth mgbd refuses for good fails the allocation like CUDA's out-of-memory",
          "[runtime][guard]") {
  MgbdProcess mgbd({64 * kMiB});
  ManagedRuntime m(mgbd, 1);
  mgb_task task = m.runtime->TaskBegin(kMiB, kOne, kOne, nullptr, "guard.cu:9");
  REQUIRE(task != 0);
  void *huge = nullptr;
  // More than the GPU holds: mgbd answers INVALID_ARGUMENT at once instead of waiting forever.
  CHECK(m.runtime->Malloc(&huge, 128 * kMiB) == cudaErrorMemoryAllocation);
  CHECK(huge == nullptr);
  CHECK(m.fake.CallsNamed("Malloc").empty());  // the real allocator was never asked
  // The session goes on: a later allocation that fits is still guarded and made.
  void *small = nullptr;
  CHECK(m.runtime->Malloc(&small, kMiB) == cudaSuccess);
  CHECK(m.runtime->ReservedBytes(task) == kMiB + kDefaultHeapBytes);
  m.runtime->Free(small);
  m.runtime->TaskEnd(task);
  CHECK(mgbd.Status().tasks_size() == 0);
}
