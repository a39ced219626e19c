// Addresses of the lazy layer (docs/runtime.md, "Addresses"): the pointer cudaMalloc returns
// outside a task is reserved through CUDA's virtual memory management and mapped on the GPU mgbd
// chooses when a launch binds it, so the program's pointer is the real one from the first
// allocation: stored in host structs, copied to the device, compared or printed, it stays valid.
// The fake maps memory the way the driver does (memfd at fixed addresses), at a GPU's 2 MiB
// granularity here.
#include <cstring>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "runtime_fixture.h"

using namespace mgb::test;

namespace {
const mgb_dim3 kOne{1, 1, 1};
constexpr uint64_t kGranule = 2 * kMiB;

cudaError_t Prepare(mgb::runtime::Runtime &rt, std::vector<const void *> args) {
  std::vector<size_t> sizes(args.size(), sizeof(void *));
  return rt.LaunchPrepare(kOne, kOne, nullptr, "addresses.cu:7", static_cast<int>(args.size()),
                          args.data(), sizes.data());
}

struct Buffers {  // a host struct of device pointers, as programs keep them
  int *a;
  int *b;
};
}  // namespace

TEST_CASE("a lazy pointer is the real one: stored before binding, valid after",
          "[runtime][addresses]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  m.fake.SetGranularity(kGranule);
  auto &rt = *m.runtime;
  Buffers held{};
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&held.a), 4 * sizeof(int)) == cudaSuccess);
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&held.b), 4 * sizeof(int)) == cudaSuccess);
  const Buffers before = held;
  int **table;  // a device array of device pointers, written before any launch
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&table), 2 * sizeof(int *)) == cudaSuccess);
  REQUIRE(rt.Memcpy(table, &held, sizeof held, cudaMemcpyHostToDevice, std::nullopt) ==
          cudaSuccess);
  int values[4] = {5, 6, 7, 8};
  REQUIRE(rt.Memcpy(held.b, values, sizeof values, cudaMemcpyHostToDevice, std::nullopt) ==
          cudaSuccess);
  CHECK(mgbd.Status().tasks_size() == 0);
  CHECK(m.fake.Calls().empty());  // addresses only: no GPU touched yet

  REQUIRE(Prepare(rt, {&table}) == cudaSuccess);
  CHECK(std::memcmp(&held, &before, sizeof held) == 0);
  CHECK(rt.RealPtr(held.a) == held.a);
  CHECK(table[1] == held.b);  // what was copied is what the device holds
  CHECK(held.b[2] == 7);      // and it points at the data
  int got[4] = {};
  REQUIRE(rt.Memcpy(got, table[1], sizeof got, cudaMemcpyDeviceToHost, std::nullopt) ==
          cudaSuccess);
  CHECK(got[3] == 8);
}

TEST_CASE("small allocations share a granule and bind together; large ones are rounded",
          "[runtime][addresses]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  m.fake.SetGranularity(kGranule);
  auto &rt = *m.runtime;
  std::vector<char *> small(100);
  for (char *&p : small) REQUIRE(rt.Malloc(reinterpret_cast<void **>(&p), 1000) == cudaSuccess);
  for (char *p : small) {
    CHECK(reinterpret_cast<uintptr_t>(p) % 256 == 0);        // cudaMalloc's alignment
    CHECK(p - small[0] < static_cast<ptrdiff_t>(kGranule));  // one granule for all of them
  }
  char *large;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&large), 3 * kMiB) == cudaSuccess);
  CHECK(reinterpret_cast<uintptr_t>(large) % kGranule == 0);

  // Another thread's launch names one small buffer: every buffer of its granule comes along.
  std::thread([&] { REQUIRE(Prepare(rt, {&small[40]}) == cudaSuccess); }).join();
  const uint64_t task = rt.TaskOf(small[40]);
  REQUIRE(task != 0);
  for (char *p : small) CHECK(rt.TaskOf(p) == task);
  CHECK(rt.TaskOf(large) == 0);  // another granule, allocated by this thread: not named there
  CHECK(m.fake.CallsNamed("MapPhysical").size() == 1);
  CHECK(m.fake.PhysicalBytesOn(0) == kGranule);

  REQUIRE(Prepare(rt, {&large}) == cudaSuccess);
  CHECK(m.fake.PhysicalBytesOn(0) == kGranule + 4 * kMiB);  // 3 MiB rounded to granules

  // A granule that is bound takes no more buffers: a new one starts.
  char *later;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&later), 1000) == cudaSuccess);
  CHECK(rt.TaskOf(later) == 0);
  CHECK((later < small[0] || later >= small[0] + kGranule));
  rt.Free(later);

  // The granule's memory goes with its last buffer, and the lazy task with it.
  for (size_t i = 0; i + 1 < small.size(); ++i) REQUIRE(rt.Free(small[i]) == cudaSuccess);
  CHECK(m.fake.CallsNamed("UnmapPhysical").empty());
  REQUIRE(rt.Free(small.back()) == cudaSuccess);
  CHECK(m.fake.CallsNamed("UnmapPhysical").size() == 1);
  CHECK(m.fake.PhysicalBytesOn(0) == 4 * kMiB);
  REQUIRE(rt.Free(large) == cudaSuccess);
  CHECK(m.fake.PhysicalBytesOn(0) == 0);
  CHECK(mgbd.Status().tasks_size() == 0);
}

TEST_CASE("a task counts whole granules", "[runtime][addresses]") {
  MgbdProcess mgbd({1024 * kMiB});
  auto config = TestConfig(mgbd.socket());
  config.task_slack_bytes = 0;
  ManagedRuntime m(mgbd, 1, config);
  m.fake.SetGranularity(kGranule);
  auto &rt = *m.runtime;
  char *a, *b;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&a), 100) == cudaSuccess);
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&b), 5 * kMiB + 1) == cudaSuccess);
  REQUIRE(Prepare(rt, {&a, &b}) == cudaSuccess);
  auto status = mgbd.Status();
  REQUIRE(status.tasks_size() == 1);
  CHECK(status.tasks(0).memory_bytes() == kGranule + 6 * kMiB + mgb::runtime::kDefaultHeapBytes);
}

TEST_CASE("a moved granule keeps its addresses, its data and its other buffers",
          "[runtime][addresses]") {
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB}, "mgb", /*spread_tasks=*/true);
  ManagedRuntime m(mgbd);
  m.fake.SetGranularity(kGranule);
  auto &rt = *m.runtime;
  int *a, *b, *c;
  rt.Malloc(reinterpret_cast<void **>(&a), sizeof(int));
  REQUIRE(Prepare(rt, {&a}) == cudaSuccess);
  rt.Malloc(reinterpret_cast<void **>(&b), sizeof(int));  // a new granule: a's is bound
  rt.Malloc(reinterpret_cast<void **>(&c), sizeof(int));  // packed beside b
  int seven = 7, nine = 9;
  rt.Memcpy(b, &seven, sizeof seven, cudaMemcpyHostToDevice, std::nullopt);
  rt.Memcpy(c, &nine, sizeof nine, cudaMemcpyHostToDevice, std::nullopt);
  REQUIRE(Prepare(rt, {&b}) == cudaSuccess);
  const uint64_t task_a = rt.TaskOf(a), task_b = rt.TaskOf(b);
  REQUIRE(task_a != task_b);
  const int device_a = rt.DeviceOfTask(task_a), device_b = rt.DeviceOfTask(task_b);
  REQUIRE(device_a != device_b);
  m.fake.ClearCalls();
  REQUIRE(Prepare(rt, {&a, &b}) == cudaSuccess);
  CHECK(rt.TaskOf(b) == task_a);
  // The peer copy is asynchronous on a GPU: the old GPU finishes it before its memory is unmapped.
  bool source_synced = false, unmapped_after_sync = false;
  for (const FakeCall &call : m.fake.Calls()) {
    if (call.name == "DeviceSynchronize" && call.device == device_b) source_synced = true;
    if (call.name == "UnmapPhysical" && call.pointer == static_cast<void *>(b)) {
      unmapped_after_sync = source_synced;
    }
  }
  CHECK(unmapped_after_sync);
  CHECK(rt.TaskOf(c) == task_a);  // on b's granule: moved with it
  CHECK(m.fake.DeviceOf(b) == device_a);
  CHECK(*b == 7);
  CHECK(*c == 9);
  CHECK(m.fake.PhysicalBytesOn(device_a) == 2 * kGranule);
  CHECK(m.fake.PhysicalBytesOn(device_b) == 0);
  CHECK(mgbd.Status().tasks_size() == 1);  // b's old task ended with its last object
}

TEST_CASE("without virtual memory management every allocation is real at once",
          "[runtime][addresses]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  m.fake.SetGranularity(0);  // the driver says cudaErrorNotSupported
  auto &rt = *m.runtime;
  int *a;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&a), 4 * sizeof(int)) == cudaSuccess);
  CHECK_FALSE(rt.IsStandIn(a));
  CHECK(m.fake.DeviceOf(a) == 0);
  CHECK(mgbd.Status().tasks_size() == 1);  // eager binding: the process task
  CHECK(rt.Eager());
  REQUIRE(rt.Free(a) == cudaSuccess);
  CHECK(mgbd.Status().tasks_size() == 0);
}
