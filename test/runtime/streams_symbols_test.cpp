// Stand-in streams and events, async copies, and __constant__ data replayed on every GPU.
#include <cstring>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "runtime_fixture.h"

using namespace mgb::test;

namespace {
const mgb_dim3 kOne{1, 1, 1};
const mgb_dim3 kWide{1000, 1, 1};
const mgb_dim3 kBlock{256, 1, 1};
float coefficients[4];  // stands for a __constant__ variable
}  // namespace

TEST_CASE("a stream created at start works on whichever GPU each task lands on",
          "[runtime][streams]") {
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB});
  ManagedRuntime m(mgbd);
  auto &rt = *m.runtime;
  cudaStream_t stream = nullptr;
  REQUIRE(rt.StreamCreate(&stream, cudaStreamNonBlocking) == cudaSuccess);
  CHECK(rt.IsStandIn(stream));
  CHECK(m.fake.CallsNamed("StreamCreate").empty());  // no GPU known yet

  std::vector<int> devices;
  std::vector<cudaStream_t> reals;
  std::vector<mgb_task> tasks;
  for (int i = 0; i < 2; ++i) {  // both held at once: they land on different GPUs
    tasks.push_back(rt.TaskBegin(kMiB, kWide, kBlock, nullptr, "stream"));
    devices.push_back(rt.DeviceOfTask(tasks.back()));
    void *p = nullptr;
    REQUIRE(rt.Malloc(&p, 256) == cudaSuccess);
    int value = 5;
    // The fake rejects a stream of another device, as CUDA does.
    REQUIRE(rt.Memcpy(p, &value, sizeof value, cudaMemcpyHostToDevice, stream) == cudaSuccess);
    reals.push_back(rt.RealStream(stream));
    CHECK(reals.back() != stream);
    rt.Free(p);
    // Tasks nest per thread: end the first before beginning the second on this thread.
    rt.TaskEnd(tasks.back());
  }
  CHECK(rt.StreamSynchronize(stream) == cudaSuccess);
  CHECK(rt.StreamDestroy(stream) == cudaSuccess);
  CHECK(m.fake.CallsNamed("StreamDestroy").size() == (devices[0] == devices[1] ? 1u : 2u));
}

TEST_CASE("async copies on stand-ins replay on the task's stream", "[runtime][streams]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  cudaStream_t stream;
  rt.StreamCreate(&stream, 0);
  int *a;
  rt.Malloc(reinterpret_cast<void **>(&a), 2 * sizeof(int));
  int values[2] = {4, 9};
  REQUIRE(rt.Memcpy(a, values, sizeof values, cudaMemcpyHostToDevice, stream) == cudaSuccess);
  REQUIRE(rt.Memset(a, 0, sizeof(int), stream) == cudaSuccess);
  values[1] = 0;  // captured at call time
  REQUIRE(rt.LaunchPrepare(kOne, kOne, nullptr, "async", 1, std::vector<const void *>{&a}.data(),
                           std::vector<size_t>{sizeof a}.data()) == cudaSuccess);
  auto *real = static_cast<int *>(rt.RealPtr(a));
  CHECK(real[0] == 0);
  CHECK(real[1] == 9);
  CHECK(m.fake.CallsNamed("MemcpyAsync").size() == 1);
  CHECK(m.fake.CallsNamed("MemsetAsync").size() == 1);
}

TEST_CASE("events are stand-ins recorded on the current GPU", "[runtime][streams]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  cudaEvent_t start, stop;
  cudaStream_t stream;
  rt.EventCreate(&start, 0);
  rt.EventCreate(&stop, 0);
  rt.StreamCreate(&stream, 0);
  CHECK(rt.EventSynchronize(start) == cudaSuccess);  // never recorded: complete, like CUDA
  mgb_task task = rt.TaskBegin(kMiB, kOne, kOne, nullptr, "events");
  REQUIRE(rt.EventRecord(start, stream) == cudaSuccess);
  REQUIRE(rt.EventRecord(stop, stream) == cudaSuccess);
  REQUIRE(rt.StreamWaitEvent(stream, stop, 0) == cudaSuccess);
  CHECK(rt.EventSynchronize(stop) == cudaSuccess);
  float ms = 0;
  CHECK(rt.EventElapsedTime(&ms, start, stop) == cudaSuccess);
  CHECK(ms == 1.5f);
  rt.TaskEnd(task);
  CHECK(rt.EventDestroy(start) == cudaSuccess);
  CHECK(rt.EventDestroy(start) == cudaErrorInvalidResourceHandle);
}

TEST_CASE("a timer started before the first lazy launch measures on the GPU it lands on",
          "[runtime][streams]") {
  // GPU 0 cannot hold the object, so the launch lands on GPU 1 while the thread's current device
  // is still 0 when the program records its start event.
  MgbdProcess mgbd({16 * kMiB, 1024 * kMiB});
  ManagedRuntime m(mgbd);
  auto &rt = *m.runtime;
  cudaEvent_t start, stop;
  rt.EventCreate(&start, 0);
  rt.EventCreate(&stop, 0);
  float *a;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&a), 64 * kMiB) == cudaSuccess);
  REQUIRE(rt.EventRecord(start, nullptr) == cudaSuccess);
  CHECK(m.fake.CallsNamed("EventRecord").empty());  // deferred: no GPU chosen yet
  REQUIRE(rt.LaunchPrepare(kWide, kBlock, nullptr, "timed", 1, std::vector<const void *>{&a}.data(),
                           std::vector<size_t>{sizeof a}.data()) == cudaSuccess);
  CHECK(m.fake.CallsNamed("EventRecord").size() == 1);  // made on the chosen GPU
  REQUIRE(rt.EventRecord(stop, nullptr) == cudaSuccess);
  REQUIRE(rt.EventSynchronize(stop) == cudaSuccess);
  float ms = 0;
  CHECK(rt.EventElapsedTime(&ms, start, stop) == cudaSuccess);  // the fake refuses two GPUs
  CHECK(ms == 1.5f);
  rt.Free(a);
}

TEST_CASE("an event waited on before any placement is recorded where the thread is",
          "[runtime][streams]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  cudaEvent_t event;
  rt.EventCreate(&event, 0);
  REQUIRE(rt.EventRecord(event, nullptr) == cudaSuccess);
  CHECK(m.fake.CallsNamed("EventRecord").empty());
  CHECK(rt.EventSynchronize(event) == cudaSuccess);
  CHECK(m.fake.CallsNamed("EventRecord").size() == 1);
  CHECK(rt.EventDestroy(event) == cudaSuccess);
}

TEST_CASE("symbol data written outside a task reaches a launch that binds nothing lazy",
          "[runtime][symbols]") {
  // Found on one H100 (examples/patterns/spectral_class.cu, issue 31's silent wrong answer): all
  // device memory was thrust's, so no task ever landed on a GPU and the __constant__ writes were
  // never applied; the kernel read n = 0.
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  m.fake.RegisterSymbol(coefficients, sizeof coefficients);
  float values[4] = {1, 2, 3, 4};
  REQUIRE(rt.MemcpyToSymbol(coefficients, values, sizeof values, 0, cudaMemcpyHostToDevice) ==
          cudaSuccess);
  CHECK(m.fake.SymbolOn(coefficients, 0).empty());
  int n = 4;  // no pointer among the arguments: nothing to bind
  const void *args[] = {&n};
  const size_t sizes[] = {sizeof n};
  REQUIRE(rt.LaunchPrepare(kWide, kBlock, coefficients, "sym.cu:1", 1, args, sizes) == cudaSuccess);
  CHECK(mgbd.Status().tasks_size() == 0);
  auto on_device = m.fake.SymbolOn(coefficients, 0);
  REQUIRE(on_device.size() == sizeof values);
  float got[4];
  std::memcpy(got, on_device.data(), sizeof got);
  CHECK(got[3] == 4.0f);
}

TEST_CASE("symbol data written outside a task reaches every GPU a task lands on",
          "[runtime][symbols]") {
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB}, "mgb", /*spread_tasks=*/true);
  ManagedRuntime m(mgbd);
  auto &rt = *m.runtime;
  m.fake.RegisterSymbol(coefficients, sizeof coefficients);
  float first[4] = {1, 2, 3, 4};
  REQUIRE(rt.MemcpyToSymbol(coefficients, first, sizeof first, 0, cudaMemcpyHostToDevice) ==
          cudaSuccess);
  CHECK(m.fake.CallsNamed("MemcpyToSymbol").empty());
  first[0] = 100;  // captured at call time

  mgb_task one = rt.TaskBegin(kMiB, kWide, kBlock, nullptr, "sym1");
  int device_one = rt.DeviceOfTask(one);
  auto on_one = m.fake.SymbolOn(coefficients, device_one);
  REQUIRE(on_one.size() == sizeof first);
  float got[4];
  std::memcpy(got, on_one.data(), sizeof got);
  CHECK(got[0] == 1.0f);
  CHECK(got[3] == 4.0f);

  float second[2] = {7, 8};  // a partial update while the first GPU is in use
  REQUIRE(rt.MemcpyToSymbol(coefficients, second, sizeof second, 2 * sizeof(float),
                            cudaMemcpyHostToDevice) == cudaSuccess);
  std::memcpy(got, m.fake.SymbolOn(coefficients, device_one).data(), sizeof got);
  CHECK(got[2] == 7.0f);

  // A second task held at the same time lands on the other GPU, from another thread.
  int device_two = -1;
  std::vector<unsigned char> on_two;
  std::thread other([&] {
    mgb_task two = rt.TaskBegin(kMiB, kWide, kBlock, nullptr, "sym2");
    device_two = rt.DeviceOfTask(two);
    on_two = m.fake.SymbolOn(coefficients, device_two);
    rt.TaskEnd(two);
  });
  other.join();
  REQUIRE(device_two != device_one);
  REQUIRE(on_two.size() == sizeof first);
  std::memcpy(got, on_two.data(), sizeof got);
  CHECK(got[0] == 1.0f);
  CHECK(got[2] == 7.0f);
  CHECK(got[3] == 8.0f);
  rt.TaskEnd(one);
}
