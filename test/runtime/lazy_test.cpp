// The lazy layer: reserved addresses, recording, replay at the launch, lazy task lifetime.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <vector>

#include <thread>

#include <catch2/catch.hpp>

#include "runtime_fixture.h"

using namespace mgb::test;

namespace {
const mgb_dim3 kOne{1, 1, 1};
const mgb_dim3 kWide{1000, 1, 1};
const mgb_dim3 kBlock{256, 1, 1};
constexpr int kN = 64;

// Host stand-ins for kernels: their addresses are the "host stubs".
void AddKernel() {}
void ScaleStructKernel() {}

struct Vectors {  // a kernel argument holding device pointers by value
  float *x;
  int n;
  float *y;
};

cudaError_t Prepare(mgb::runtime::Runtime &rt, const void *kernel, mgb_dim3 grid,
                    std::vector<const void *> args, std::vector<size_t> sizes) {
  return rt.LaunchPrepare(grid, kBlock, kernel, "lazy.cu:42", static_cast<int>(args.size()),
                          args.data(), sizes.data());
}

// AddKernel(x, y, z): z[i] = x[i] + y[i] for kN floats.
void RegisterAdd(FakeCudaApi &fake) {
  fake.RegisterKernel(reinterpret_cast<const void *>(&AddKernel),
                      {sizeof(float *), sizeof(float *), sizeof(float *)}, [](FakeLaunch &launch) {
                        auto *x = *static_cast<float **>(launch.args[0]);
                        auto *y = *static_cast<float **>(launch.args[1]);
                        auto *z = *static_cast<float **>(launch.args[2]);
                        for (int i = 0; i < kN; ++i) z[i] = x[i] + y[i];
                      });
}

std::vector<std::string> Names(const std::vector<FakeCall> &calls) {
  std::vector<std::string> names;
  for (const FakeCall &call : calls) {
    if (call.name != "SetDevice") names.push_back(call.name);
  }
  return names;
}
}  // namespace

TEST_CASE("outside a task allocations are stand-ins and ops replay in order at the launch",
          "[runtime][lazy]") {
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB});
  ManagedRuntime m(mgbd);
  auto &rt = *m.runtime;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&a), kN * sizeof(float)) == cudaSuccess);
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&b), kN * sizeof(float)) == cudaSuccess);
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&c), kN * sizeof(float)) == cudaSuccess);
  CHECK(rt.IsStandIn(a));
  CHECK(rt.IsStandIn(b + 10));  // interior pointers too
  std::vector<float> host(kN);
  std::iota(host.begin(), host.end(), 1.0f);
  REQUIRE(rt.Memcpy(a, host.data(), kN * sizeof(float), cudaMemcpyHostToDevice, std::nullopt) ==
          cudaSuccess);
  std::fill(host.begin(), host.end(), -1.0f);  // must not change what is replayed
  REQUIRE(rt.Memset(b, 0, kN * sizeof(float), std::nullopt) == cudaSuccess);
  float two = 2.0f;
  for (int i = 0; i < kN; ++i) {  // element-wise writes through interior pointers
    REQUIRE(rt.Memcpy(b + i, &two, sizeof two, cudaMemcpyHostToDevice, std::nullopt) ==
            cudaSuccess);
  }
  CHECK(mgbd.Status().tasks_size() == 0);
  CHECK(m.fake.Calls().empty());  // nothing touched a GPU yet
  CHECK(rt.Memcpy(a + kN - 1, host.data(), 2 * sizeof(float), cudaMemcpyHostToDevice,
                  std::nullopt) == cudaErrorInvalidValue);  // past the end, like CUDA

  RegisterAdd(m.fake);
  REQUIRE(Prepare(rt, reinterpret_cast<const void *>(&AddKernel), kWide, {&a, &b, &c},
                  {sizeof a, sizeof b, sizeof c}) == cudaSuccess);
  REQUIRE(mgbd.Status().tasks_size() == 1);
  // The three small buffers share one granule (the fake's: a 4 KiB page): that is what is held.
  CHECK(mgbd.Status().tasks(0).memory_bytes() == 4096 + mgb::runtime::kDefaultHeapBytes);
  uint64_t task = rt.TaskOf(a);
  int device = rt.DeviceOfTask(task);
  std::vector<std::string> expected = {"MapPhysical", "MemcpyHtoD", "Memset"};
  for (int i = 0; i < kN; ++i) expected.push_back("MemcpyHtoD");
  CHECK(Names(m.fake.Calls()) == expected);
  for (const FakeCall &call : m.fake.Calls()) CHECK(call.device == device);
  int current = -1;
  m.fake.GetDevice(&current);
  CHECK(current == device);

  // The addresses the program holds are the real ones, interior pointers included: mapped where
  // they were reserved.
  CHECK(rt.RealPtr(a) == a);
  CHECK(rt.RealPtr(a + 5) == a + 5);
  CHECK(m.fake.DeviceOf(a) == device);
  void *args[] = {&a, &b, &c};
  REQUIRE(rt.LaunchKernel(reinterpret_cast<const void *>(&AddKernel), dim3(1), dim3(kN), args, 0,
                          nullptr) == cudaSuccess);
  std::vector<float> out(kN);
  REQUIRE(rt.Memcpy(out.data(), c, kN * sizeof(float), cudaMemcpyDeviceToHost, std::nullopt) ==
          cudaSuccess);
  for (int i = 0; i < kN; ++i) CHECK(out[i] == static_cast<float>(i + 1) + 2.0f);

  // The lazy task ends with its last object.
  rt.Free(a);
  rt.Free(b);
  CHECK(mgbd.Status().tasks_size() == 1);
  rt.Free(c);
  CHECK(mgbd.Status().tasks_size() == 0);
  CHECK(m.fake.LiveAllocations() == 0);
}

TEST_CASE("cooperative and attribute launches bind what their argument values name",
          "[runtime][lazy]") {
  // cudaLaunchCooperativeKernel and cudaLaunchKernelExC reach their arguments through a void*
  // array, however the program filled it: their twins bind the buffers the values name and pass
  // the values as they are (the addresses are real); a stand-in stream or event becomes real.
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&a), kN * sizeof(float)) == cudaSuccess);
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&b), kN * sizeof(float)) == cudaSuccess);
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&c), kN * sizeof(float)) == cudaSuccess);
  std::vector<float> host(kN, 1.5f);
  REQUIRE(rt.Memcpy(a, host.data(), kN * sizeof(float), cudaMemcpyHostToDevice, std::nullopt) ==
          cudaSuccess);
  REQUIRE(rt.Memset(b, 0, kN * sizeof(float), std::nullopt) == cudaSuccess);
  RegisterAdd(m.fake);
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  REQUIRE(rt.StreamCreate(&stream, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(rt.EventCreate(&done, cudaEventDisableTiming) == cudaSuccess);
  REQUIRE(rt.IsStandIn(stream));
  REQUIRE(rt.IsStandIn(done));
  CHECK(mgbd.Status().tasks_size() == 0);

  void *args[3];  // filled element by element, as no rewrite could follow
  args[0] = &a;
  args[1] = &b;
  args[2] = &c;
  cudaLaunchAttribute attributes[2] = {};
  attributes[0].id = cudaLaunchAttributeClusterDimension;
  attributes[0].val.clusterDim.x = 2;
  attributes[0].val.clusterDim.y = 1;
  attributes[0].val.clusterDim.z = 1;
  attributes[1].id = cudaLaunchAttributeLaunchCompletionEvent;
  attributes[1].val.launchCompletionEvent.event = done;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(2);
  config.blockDim = dim3(kN);
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = 2;
  REQUIRE(rt.LaunchKernelExC(&config, reinterpret_cast<const void *>(&AddKernel), args) ==
          cudaSuccess);
  REQUIRE(mgbd.Status().tasks_size() == 1);
  const uint64_t task = rt.TaskOf(a);
  CHECK(task != 0);
  CHECK(rt.TaskOf(c) == task);
  std::vector<cudaLaunchAttribute> seen = m.fake.LastLaunchAttributes();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].val.clusterDim.x == 2);
  CHECK(seen[1].val.launchCompletionEvent.event != nullptr);
  CHECK_FALSE(rt.IsStandIn(seen[1].val.launchCompletionEvent.event));
  CHECK(config.stream == stream);  // the program's config is left as it was
  CHECK(attributes[1].val.launchCompletionEvent.event == done);

  // c = a + c (cooperative), through an array of the same values.
  args[1] = &c;
  REQUIRE(rt.LaunchCooperativeKernel(reinterpret_cast<const void *>(&AddKernel), dim3(1), dim3(kN),
                                     args, 0, stream) == cudaSuccess);
  CHECK(m.fake.CallsNamed("LaunchCooperativeKernel").size() == 1);
  std::vector<float> out(kN);
  REQUIRE(rt.Memcpy(out.data(), c, kN * sizeof(float), cudaMemcpyDeviceToHost, std::nullopt) ==
          cudaSuccess);
  for (int i = 0; i < kN; ++i) CHECK(out[i] == 3.0f);
  rt.Free(a);
  rt.Free(b);
  rt.Free(c);
  CHECK(mgbd.Status().tasks_size() == 0);
}

TEST_CASE("stand-ins inside by-value structs are found and translated", "[runtime][lazy]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  Vectors v{nullptr, kN, nullptr};
  rt.Malloc(reinterpret_cast<void **>(&v.x), kN * sizeof(float));
  rt.Malloc(reinterpret_cast<void **>(&v.y), kN * sizeof(float));
  std::vector<float> host(kN, 3.0f);
  rt.Memcpy(v.x, host.data(), kN * sizeof(float), cudaMemcpyHostToDevice, std::nullopt);
  float factor = 2.0f;
  REQUIRE(Prepare(rt, reinterpret_cast<const void *>(&ScaleStructKernel), kOne, {&v, &factor},
                  {sizeof v, sizeof factor}) == cudaSuccess);
  CHECK(rt.TaskOf(v.x) != 0);
  CHECK(rt.TaskOf(v.y) == rt.TaskOf(v.x));  // one task for the launch
  Vectors real = v;
  rt.TranslateWords(&real, sizeof real);  // what mgb_arg(v) does: the same bytes now
  CHECK(std::memcmp(&real, &v, sizeof v) == 0);
  CHECK(m.fake.DeviceOf(v.x) == 0);
  CHECK(m.fake.DeviceOf(v.y) == 0);
  CHECK(v.x[0] == 3.0f);  // replayed, and readable through the program's own pointer
}

TEST_CASE("copies between stand-ins replay in call order", "[runtime][lazy]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  int *a, *b, *gone;
  rt.Malloc(reinterpret_cast<void **>(&a), sizeof(int));
  rt.Malloc(reinterpret_cast<void **>(&b), sizeof(int));
  rt.Malloc(reinterpret_cast<void **>(&gone), 1024);
  int one = 1, two = 2;
  rt.Memcpy(gone, &one, sizeof one, cudaMemcpyHostToDevice, std::nullopt);
  REQUIRE(rt.Free(gone) == cudaSuccess);  // never used by a launch: never mapped
  CHECK(rt.Free(gone) == cudaErrorInvalidValue);
  rt.Memcpy(a, &one, sizeof one, cudaMemcpyHostToDevice, std::nullopt);
  rt.Memcpy(b, a, sizeof(int), cudaMemcpyDeviceToDevice, std::nullopt);  // b = 1
  rt.Memcpy(a, &two, sizeof two, cudaMemcpyHostToDevice, std::nullopt);  // then a = 2
  // Launch with b only: a is reached through the recorded copy and bound with it.
  REQUIRE(Prepare(rt, nullptr, kOne, {&b}, {sizeof b}) == cudaSuccess);
  CHECK(rt.TaskOf(a) == rt.TaskOf(b));
  int got_a = 0, got_b = 0;
  rt.Memcpy(&got_a, a, sizeof(int), cudaMemcpyDeviceToHost, std::nullopt);
  rt.Memcpy(&got_b, b, sizeof(int), cudaMemcpyDeviceToHost, std::nullopt);
  CHECK(got_b == 1);
  CHECK(got_a == 2);
  CHECK(m.fake.CallsNamed("MapPhysical").size() == 1);  // a and b share a granule
}

TEST_CASE("a copy into a buffer freed before any launch dies with it", "[runtime][lazy]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  int *a, *b;
  rt.Malloc(reinterpret_cast<void **>(&a), sizeof(int));
  rt.Malloc(reinterpret_cast<void **>(&b), sizeof(int));
  int seven = 7;
  rt.Memcpy(a, &seven, sizeof seven, cudaMemcpyHostToDevice, std::nullopt);
  rt.Memcpy(b, a, sizeof(int), cudaMemcpyDeviceToDevice, std::nullopt);  // recorded on a and b
  REQUIRE(rt.Free(b) == cudaSuccess);  // b never reached a GPU: dropped, with the copy into it
  REQUIRE(Prepare(rt, nullptr, kOne, {&a}, {sizeof a}) == cudaSuccess);
  CHECK(m.fake.CallsNamed("MapPhysical").size() == 1);  // only a
  CHECK(m.fake.CallsNamed("MemcpyDtoD").empty());       // the dead copy was not replayed
  int got = 0;
  rt.Memcpy(&got, a, sizeof got, cudaMemcpyDeviceToHost, std::nullopt);
  CHECK(got == 7);
}

TEST_CASE("reading back a stand-in no launch used places it on its own", "[runtime][lazy]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  int *a;
  rt.Malloc(reinterpret_cast<void **>(&a), 4 * sizeof(int));
  rt.Memset(a, 0x01, 4 * sizeof(int), std::nullopt);
  int got[4] = {};
  REQUIRE(rt.Memcpy(got, a, sizeof got, cudaMemcpyDeviceToHost, std::nullopt) == cudaSuccess);
  CHECK(got[3] == 0x01010101);
  CHECK(mgbd.Status().tasks_size() == 1);
  rt.Free(a);
  CHECK(mgbd.Status().tasks_size() == 0);
}

TEST_CASE("a launch using stand-ins of two GPUs moves them to one (peer copy)", "[runtime][lazy]") {
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB}, "mgb", /*spread_tasks=*/true);
  ManagedRuntime m(mgbd);
  auto &rt = *m.runtime;
  int *a, *b;
  rt.Malloc(reinterpret_cast<void **>(&a), sizeof(int));
  REQUIRE(Prepare(rt, nullptr, kWide, {&a}, {sizeof a}) == cudaSuccess);
  // Allocated after a's launch: not swept into a's task (see the next test).
  rt.Malloc(reinterpret_cast<void **>(&b), sizeof(int));
  int seven = 7;
  rt.Memcpy(b, &seven, sizeof seven, cudaMemcpyHostToDevice, std::nullopt);
  REQUIRE(Prepare(rt, nullptr, kWide, {&b}, {sizeof b}) == cudaSuccess);
  uint64_t task_a = rt.TaskOf(a), task_b = rt.TaskOf(b);
  REQUIRE(task_a != task_b);
  REQUIRE(rt.DeviceOfTask(task_a) != rt.DeviceOfTask(task_b));  // fewest warps: two GPUs
  REQUIRE(Prepare(rt, nullptr, kWide, {&a, &b}, {sizeof a, sizeof b}) == cudaSuccess);
  CHECK(rt.TaskOf(b) == task_a);
  CHECK(m.fake.CallsNamed("MemcpyPeer").size() == 1);
  CHECK(rt.RealPtr(b) == b);  // moved, at the same address
  CHECK(m.fake.DeviceOf(b) == rt.DeviceOfTask(task_a));
  int got = 0;
  rt.Memcpy(&got, b, sizeof got, cudaMemcpyDeviceToHost, std::nullopt);
  CHECK(got == 7);
  CHECK(mgbd.Status().tasks_size() == 1);  // b's old task ended with its last object
}

TEST_CASE("a migration mgbd cannot make room for fails the launch and keeps the data in place",
          "[runtime][lazy]") {
  // Two 64 MiB GPUs, a 40 MiB buffer bound on each: one launch on both would need 80 MiB on one
  // GPU, which mgbd can never grant. The launch fails (the session, under MGB_UNMANAGED, goes on
  // unmanaged) and the buffer that would have moved keeps its memory, address and data.
  MgbdProcess mgbd({64 * kMiB, 64 * kMiB}, "mgb", /*spread_tasks=*/true);
  ManagedRuntime m(mgbd, 2, TestConfig(mgbd.socket(), mgb::runtime::FailurePolicy::kUnmanaged));
  auto &rt = *m.runtime;
  const size_t bytes = 40 * kMiB;
  int *a = nullptr, *b = nullptr;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&a), bytes) == cudaSuccess);
  REQUIRE(Prepare(rt, nullptr, kWide, {&a}, {sizeof a}) == cudaSuccess);
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&b), bytes) == cudaSuccess);
  int seven = 7;
  REQUIRE(rt.Memcpy(b, &seven, sizeof seven, cudaMemcpyHostToDevice, std::nullopt) == cudaSuccess);
  REQUIRE(Prepare(rt, nullptr, kWide, {&b}, {sizeof b}) == cudaSuccess);
  const uint64_t task_a = rt.TaskOf(a), task_b = rt.TaskOf(b);
  REQUIRE(rt.DeviceOfTask(task_a) != rt.DeviceOfTask(task_b));
  const int device_b = m.fake.DeviceOf(b);
  CHECK(Prepare(rt, nullptr, kWide, {&a, &b}, {sizeof a, sizeof b}) != cudaSuccess);
  CHECK(m.fake.CallsNamed("MemcpyPeer").empty());
  CHECK(m.fake.DeviceOf(b) == device_b);  // not unmapped, not moved
  int got = 0;
  REQUIRE(rt.Memcpy(&got, b, sizeof got, cudaMemcpyDeviceToHost, std::nullopt) == cudaSuccess);
  CHECK(got == 7);
}

TEST_CASE("a thread's first lazy launch reserves all its unbound buffers at once",
          "[runtime][lazy]") {
  // Growing a task one launch at a time lets two processes on one GPU each hold part of their
  // memory while waiting for the rest: a deadlock. So the first launch takes the whole footprint.
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  float *in, *out, *scratch;
  rt.Malloc(reinterpret_cast<void **>(&in), 64 * kMiB);
  rt.Malloc(reinterpret_cast<void **>(&out), 32 * kMiB);
  rt.Malloc(reinterpret_cast<void **>(&scratch), 16 * kMiB);
  REQUIRE(Prepare(rt, nullptr, kWide, {&in}, {sizeof in}) == cudaSuccess);  // only `in` named
  CHECK(rt.TaskOf(out) == rt.TaskOf(in));
  CHECK(rt.TaskOf(scratch) == rt.TaskOf(in));
  auto status = mgbd.Status();
  REQUIRE(status.tasks_size() == 1);
  CHECK(status.tasks(0).memory_bytes() >= 112 * kMiB);  // one TaskBegin with all three
  float *other = nullptr;                               // another thread's buffers stay its own
  std::thread([&] { rt.Malloc(reinterpret_cast<void **>(&other), kMiB); }).join();
  float *more;
  rt.Malloc(reinterpret_cast<void **>(&more), kMiB);
  REQUIRE(Prepare(rt, nullptr, kWide, {&more}, {sizeof more}) == cudaSuccess);
  CHECK(rt.TaskOf(other) == 0);
}

TEST_CASE("host copies past the capture limit place the buffers at once instead of recording",
          "[runtime][lazy]") {
  // A program streaming a large input in through a small pinned buffer before its first launch:
  // recording would keep a host copy of the whole input.
  MgbdProcess mgbd({1024 * kMiB});
  auto config = TestConfig(mgbd.socket());
  config.capture_limit_bytes = 3 * sizeof(int);
  ManagedRuntime m(mgbd, 1, config);
  auto &rt = *m.runtime;
  int *input, *scratch;
  rt.Malloc(reinterpret_cast<void **>(&input), 8 * sizeof(int));
  rt.Malloc(reinterpret_cast<void **>(&scratch), 4 * sizeof(int));
  int chunk[2] = {1, 2};
  REQUIRE(rt.Memcpy(input, chunk, sizeof chunk, cudaMemcpyHostToDevice, std::nullopt) ==
          cudaSuccess);
  CHECK(mgbd.Status().tasks_size() == 0);  // 2 ints captured: within the limit
  chunk[0] = 3;
  chunk[1] = 4;
  REQUIRE(rt.Memcpy(input + 2, chunk, sizeof chunk, cudaMemcpyHostToDevice, std::nullopt) ==
          cudaSuccess);
  REQUIRE(mgbd.Status().tasks_size() == 1);  // 4 would pass it: placed, the recorded copy replayed
  CHECK(rt.TaskOf(scratch) == rt.TaskOf(input));  // the thread's other buffers came along
  CHECK(mgbd.Status().tasks(0).memory_bytes() >= 12 * sizeof(int));
  chunk[0] = 5;
  chunk[1] = 6;
  REQUIRE(rt.Memcpy(input + 4, chunk, sizeof chunk, cudaMemcpyHostToDevice, std::nullopt) ==
          cudaSuccess);
  int got[6] = {};
  REQUIRE(rt.Memcpy(got, input, sizeof got, cudaMemcpyDeviceToHost, std::nullopt) == cudaSuccess);
  CHECK(std::vector<int>(got, got + 6) == std::vector<int>{1, 2, 3, 4, 5, 6});

  // Captured bytes are given back at replay: a new buffer records again.
  int *later;
  rt.Malloc(reinterpret_cast<void **>(&later), 2 * sizeof(int));
  REQUIRE(rt.Memcpy(later, chunk, sizeof chunk, cudaMemcpyHostToDevice, std::nullopt) ==
          cudaSuccess);
  CHECK(rt.TaskOf(later) == 0);
}

TEST_CASE("a task placed before its first launch tells mgbd that launch's shape",
          "[runtime][lazy]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  int *a;
  rt.Malloc(reinterpret_cast<void **>(&a), 4 * sizeof(int));
  int got[4] = {};
  REQUIRE(rt.Memcpy(got, a, sizeof got, cudaMemcpyDeviceToHost, std::nullopt) == cudaSuccess);
  auto before = mgbd.Status();  // placed by the read-back: no launch shape yet
  REQUIRE(before.tasks_size() == 1);
  // A one-thread block: one of an SM's 32 block slots, half its 64 warps: 2 warps of the GPU.
  CHECK(before.tasks(0).warps() == 2);
  REQUIRE(Prepare(rt, nullptr, kWide, {&a}, {sizeof a}) == cudaSuccess);
  auto after = mgbd.Status();
  REQUIRE(after.tasks_size() == 1);
  const uint64_t wide = uint64_t{kWide.x} * (kBlock.x / 32);
  CHECK(after.tasks(0).warps() == std::min<uint64_t>(wide, after.gpus(0).warp_capacity()));
  CHECK(after.tasks(0).warps() > 2);
  REQUIRE(Prepare(rt, nullptr, kOne, {&a}, {sizeof a}) == cudaSuccess);  // narrower: unchanged
  CHECK(mgbd.Status().tasks(0).warps() == after.tasks(0).warps());
}

TEST_CASE("pitched allocations outside a task keep their pitch at replay", "[runtime][lazy]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  void *image = nullptr;
  size_t pitch = 0;
  REQUIRE(rt.MallocPitch(&image, &pitch, 100, 4) == cudaSuccess);
  CHECK(pitch % 512 == 0);
  std::vector<unsigned char> rows(100 * 4);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<unsigned char>(i % 100);
  REQUIRE(rt.Memcpy2D(image, pitch, rows.data(), 100, 100, 4, cudaMemcpyHostToDevice) ==
          cudaSuccess);
  REQUIRE(Prepare(rt, nullptr, kOne, {&image}, {sizeof image}) == cudaSuccess);
  auto *real = static_cast<unsigned char *>(rt.RealPtr(image));
  CHECK(real[3 * pitch + 99] == 99);
}

TEST_CASE("stand-in addresses inside copied host data are bound and translated at replay",
          "[runtime][lazy]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  int *a, *b;
  int **table;  // a device array of device pointers
  rt.Malloc(reinterpret_cast<void **>(&a), sizeof(int));
  rt.Malloc(reinterpret_cast<void **>(&b), sizeof(int));
  rt.Malloc(reinterpret_cast<void **>(&table), 2 * sizeof(int *));
  int *pointers[2] = {a, b};
  rt.Memcpy(table, pointers, sizeof pointers, cudaMemcpyHostToDevice, std::nullopt);
  REQUIRE(Prepare(rt, nullptr, kOne, {&table}, {sizeof table}) == cudaSuccess);
  CHECK(rt.TaskOf(a) == rt.TaskOf(table));  // reached through the copied bytes
  CHECK(rt.RealPtr(table) == table);
  CHECK(table[0] == a);  // the bytes the program copied, unchanged
  CHECK(table[1] == b);
  CHECK(m.fake.DeviceOf(table[1]) == 0);
}

TEST_CASE("a small buffer bound to a placed task on a full GPU fits its slack: no grow, no wait",
          "[runtime][lazy]") {
  // A large task's 8-byte result counter, allocated after the task was placed, must not wait to
  // grow on a full GPU behind another task's grow (its job would be lost): the slack covers it.
  MgbdProcess mgbd({64 * kMiB});
  auto config = TestConfig(mgbd.socket());
  const uint64_t slack = 2 * kMiB;  // 0 here makes the launch below wait (checked by hand)
  config.task_slack_bytes = slack;
  ManagedRuntime m(mgbd, 1, config);
  auto &rt = *m.runtime;
  auto other = mgb::Client::Connect(mgbd.socket(), 1, "other");
  REQUIRE(other.ok());
  // Leaves exactly what the first launch asks: 1 MiB + the 8 MiB heap + the 2 MiB slack.
  const uint64_t ours = kMiB + mgb::runtime::kDefaultHeapBytes + slack;
  auto held = (*other)->TaskBegin(64 * kMiB - ours, mgb::LaunchShape{}, "other");
  REQUIRE(held.ok());
  float *data, *counter;
  rt.Malloc(reinterpret_cast<void **>(&data), kMiB);
  REQUIRE(Prepare(rt, nullptr, kWide, {&data}, {sizeof data}) == cudaSuccess);
  REQUIRE(mgbd.Status().gpus(0).memory_available_bytes() == 0);
  rt.Malloc(reinterpret_cast<void **>(&counter), 8);
  std::atomic<bool> launched{false};
  std::thread launcher([&] {
    CHECK(Prepare(rt, nullptr, kOne, {&data, &counter}, {sizeof data, sizeof counter}) ==
          cudaSuccess);
    launched = true;
  });
  for (int i = 0; i < 100 && !launched; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(launched.load());  // without the slack it would wait for `other` to end
  CHECK(mgbd.Status().tasks_size() == 2);
  REQUIRE((*other)->TaskEnd(held->task_id).ok());  // frees a waiting launch if there was one
  launcher.join();
  CHECK(rt.TaskOf(counter) == rt.TaskOf(data));
  CHECK(rt.ReservedBytes(rt.TaskOf(data)) == ours);  // not grown
}

TEST_CASE("allocations before a static begin are bound to its task there, counted once",
          "[runtime][lazy]") {
  // The rewriter moves a static begin past the task's own allocations to the memory's first use
  // (docs/rewriter.md, "The begin at the memory's first use"): the allocations are lazy, the
  // begin asks for their bytes, and mgb_prepare_pointers binds them to it before the first launch.
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB});
  auto config = TestConfig(mgbd.socket());
  config.task_slack_bytes = 0;
  ManagedRuntime m(mgbd, 2, config);
  auto &rt = *m.runtime;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&a), 4 * kMiB) == cudaSuccess);
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&b), 4 * kMiB) == cudaSuccess);
  CHECK(rt.IsStandIn(a));
  CHECK(mgbd.Status().tasks_size() == 0);  // host work here holds no GPU memory
  CHECK(m.fake.Calls().empty());

  mgb_task task = rt.TaskBegin(8 * kMiB, kWide, kBlock, nullptr, "sunk.cu:9");
  REQUIRE(task != 0);
  const uint64_t reserved = rt.ReservedBytes(task);
  const void *pointers[] = {a, b};
  REQUIRE(rt.PreparePointers("sunk.cu:9", 2, pointers) == cudaSuccess);
  CHECK(rt.TaskOf(a) == task);
  CHECK(rt.TaskOf(b) == task);
  CHECK(rt.ReservedBytes(task) == reserved);  // within the begin's bytes: not grown
  REQUIRE(mgbd.Status().tasks_size() == 1);
  int device = rt.DeviceOfTask(task);
  CHECK(m.fake.DeviceOf(a) == device);
  CHECK(m.fake.DeviceOf(b) == device);
  // The task's own allocation after the begin joins it as before.
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&c), kMiB) == cudaSuccess);
  CHECK_FALSE(rt.IsStandIn(c));
  RegisterAdd(m.fake);
  void *args[] = {&a, &b, &c};
  REQUIRE(rt.LaunchKernel(reinterpret_cast<const void *>(&AddKernel), dim3(1), dim3(kN), args, 0,
                          nullptr) == cudaSuccess);
  rt.Free(a);
  rt.Free(b);
  rt.Free(c);
  rt.TaskEnd(task);
  CHECK(mgbd.Status().tasks_size() == 0);
  CHECK(m.fake.LiveAllocations() == 0);
}

TEST_CASE("a buffer with reserved addresses has mapped memory just past both of its ends",
          "[runtime][lazy]") {
  // Rodinia srad_v2 reads a row before and a row after its image; next to cudaMalloc's
  // allocations that is memory, and it must stay memory at reserved addresses (measured: without
  // margins every srad_v2 job faulted).
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB});
  auto config = TestConfig(mgbd.socket());
  config.span_margin_granules = 1;
  ManagedRuntime m(mgbd, 2, config);
  auto &rt = *m.runtime;
  char *big = nullptr, *small = nullptr;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&big), 3 * 4096 + 5) == cudaSuccess);
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&small), 64) == cudaSuccess);
  REQUIRE(Prepare(rt, nullptr, kOne, {&big, &small}, {sizeof big, sizeof small}) == cudaSuccess);
  const int device = rt.DeviceOfTask(rt.TaskOf(big));
  for (char *p : {big - 1, big - 4096, big + 3 * 4096 + 5, big + 5 * 4096 - 1, small - 1,
                  small + 64, small + 4096 - 1})
    CHECK(m.fake.DeviceOf(p) == device);
  // The margins are part of what the task holds: (4 pages + 2) + (1 page + 2), plus the heap.
  CHECK(mgbd.Status().tasks(0).memory_bytes() == (6 + 3) * 4096 + mgb::runtime::kDefaultHeapBytes);
  rt.Free(big);
  rt.Free(small);
  CHECK(mgbd.Status().tasks_size() == 0);
  CHECK(m.fake.LiveAllocations() == 0);
}
