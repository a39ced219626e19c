// No stand-in reaches code mgb cannot see: host arrays of device pointers copied to the device,
// pointers handed to a library, CUDA graphs, eager binding for programs with code compiled as
// written, and launches on real memory of a task on another GPU.
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "runtime_fixture.h"

using namespace mgb::test;

namespace {
const mgb_dim3 kOne{1, 1, 1};
const mgb_dim3 kBlock{128, 1, 1};
constexpr int kN = 16;

void IncrementKernel() {}  // a host stand-in for a kernel's stub: its address names it

cudaError_t Prepare(mgb::runtime::Runtime &rt, const void *kernel, std::vector<const void *> args,
                    std::vector<size_t> sizes) {
  return rt.LaunchPrepare(kOne, kBlock, kernel, "boundaries.cu:7", static_cast<int>(args.size()),
                          args.data(), sizes.data());
}

void RegisterIncrement(FakeCudaApi &fake) {
  fake.RegisterKernel(reinterpret_cast<const void *>(&IncrementKernel), {sizeof(float *)},
                      [](FakeLaunch &launch) {
                        auto *x = *static_cast<float **>(launch.args[0]);
                        for (int i = 0; i < kN; ++i) x[i] += 1.0f;
                      });
}

std::vector<float> ReadBack(mgb::runtime::Runtime &rt, const float *device) {
  std::vector<float> out(kN);
  REQUIRE(rt.Memcpy(out.data(), device, kN * sizeof(float), cudaMemcpyDeviceToHost, std::nullopt) ==
          cudaSuccess);
  return out;
}
}  // namespace

TEST_CASE("a host array of device pointers copied into real device memory arrives translated",
          "[runtime][boundaries]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  float *a = nullptr, *b = nullptr;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&a), kN * sizeof(float)) == cudaSuccess);
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&b), kN * sizeof(float)) == cudaSuccess);
  REQUIRE(rt.IsStandIn(a));
  // The array lives in a static task (real memory); a and b are still unbound stand-ins.
  mgb_task task = rt.TaskBegin(kMiB, kOne, kOne, nullptr, "batched.cu:3");
  REQUIRE(task != 0);
  float **array = nullptr;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&array), 2 * sizeof(float *)) == cudaSuccess);
  REQUIRE_FALSE(rt.IsStandIn(array));
  float *host[2] = {a, b + 3};  // an interior pointer too
  REQUIRE(rt.Memcpy(array, host, sizeof host, cudaMemcpyHostToDevice, std::nullopt) == cudaSuccess);
  // What the library would read on the device: real addresses of memory on this GPU.
  CHECK(array[0] == rt.RealPtr(a));
  CHECK(array[1] == static_cast<float *>(rt.RealPtr(b)) + 3);
  CHECK(m.fake.DeviceOf(array[0]) == 0);
  CHECK(rt.TaskOf(a) == task);  // bound to the array's task: one GPU for all of it
  CHECK(host[0] == a);          // the program's own host array is left as it was
  rt.TaskEnd(task);
}

TEST_CASE("mgb_prepare_pointers binds a library call's stand-ins before the call",
          "[runtime][boundaries]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  float *x = nullptr;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&x), kN * sizeof(float)) == cudaSuccess);
  std::vector<float> ones(kN, 1.0f);
  REQUIRE(rt.Memcpy(x, ones.data(), kN * sizeof(float), cudaMemcpyHostToDevice, std::nullopt) ==
          cudaSuccess);
  float alpha = 2.0f;  // a host scalar beside it is left alone
  const void *pointers[] = {x + 4, &alpha};
  REQUIRE(rt.PreparePointers("library.cu:9", 2, pointers) == cudaSuccess);
  REQUIRE(mgbd.Status().tasks_size() == 1);
  auto *real = static_cast<float *>(rt.RealPtr(x + 4));
  CHECK(m.fake.DeviceOf(real) == 0);
  CHECK(real[0] == 1.0f);  // the recorded copy was replayed first
  CHECK(rt.RealPtr(&alpha) == &alpha);
}

TEST_CASE("a stream capture uses memory bound before it begins, and the graph replays on its GPU",
          "[runtime][boundaries][graphs]") {
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB});
  ManagedRuntime m(mgbd, 2);
  auto &rt = *m.runtime;
  RegisterIncrement(m.fake);
  float *x = nullptr;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&x), kN * sizeof(float)) == cudaSuccess);
  REQUIRE(rt.Memset(x, 0, kN * sizeof(float), std::nullopt) == cudaSuccess);
  cudaStream_t stream = nullptr;
  REQUIRE(rt.StreamCreate(&stream, cudaStreamNonBlocking) == cudaSuccess);

  // Binding inside the capture would allocate and replay the memset: CUDA (and the fake)
  // would invalidate the capture. The begin binds first.
  REQUIRE(rt.StreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
  REQUIRE(mgbd.Status().tasks_size() == 1);
  const int device = rt.DeviceOfTask(rt.TaskOf(x));
  REQUIRE(device >= 0);
  void *args[] = {&x};
  for (int i = 0; i < 3; ++i) {  // lazy launches inside the capture: recorded, nothing placed
    REQUIRE(rt.LaunchKernel(reinterpret_cast<const void *>(&IncrementKernel), dim3(1), dim3(kN),
                            args, 0, stream) == cudaSuccess);
  }
  cudaGraph_t graph = nullptr;
  REQUIRE(rt.StreamEndCapture(stream, &graph) == cudaSuccess);
  REQUIRE(graph != nullptr);
  cudaGraphExec_t exec = nullptr;
  REQUIRE(rt.GraphInstantiate(&exec, graph, 0) == cudaSuccess);
  CHECK(ReadBack(rt, x)[0] == 0.0f);  // captured, not run
  m.fake.SetDevice(1 - device);       // whatever the thread made current meanwhile
  for (int i = 0; i < 5; ++i) REQUIRE(rt.GraphLaunch(exec, stream) == cudaSuccess);
  CHECK(ReadBack(rt, x)[kN - 1] == 15.0f);
  for (const FakeCall &call : m.fake.CallsNamed("GraphLaunch")) CHECK(call.device == device);
  CHECK(mgbd.Status().tasks_size() == 1);  // no task per graph launch
  REQUIRE(rt.Free(x) == cudaSuccess);
  CHECK(mgbd.Status().tasks_size() == 0);
}

TEST_CASE("memory first used inside a capture is refused with a message, and no task lingers",
          "[runtime][boundaries][graphs]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  RegisterIncrement(m.fake);
  cudaStream_t stream = nullptr;
  REQUIRE(rt.StreamCreate(&stream, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(rt.StreamBeginCapture(stream, cudaStreamCaptureModeGlobal) == cudaSuccess);
  float *late = nullptr;  // another thread's allocation would look like this to the capture
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&late), kN * sizeof(float)) == cudaSuccess);
  CHECK(Prepare(rt, reinterpret_cast<const void *>(&IncrementKernel), {&late}, {sizeof late}) ==
        cudaErrorStreamCaptureUnsupported);
  CHECK(mgbd.Status().tasks_size() == 0);
  cudaGraph_t graph = nullptr;
  CHECK(rt.StreamEndCapture(stream, &graph) == cudaSuccess);
}

TEST_CASE("after code mgb cannot see is noted, allocations are real at once in one task",
          "[runtime][boundaries][eager]") {
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB});
  ManagedRuntime m(mgbd, 2);
  auto &rt = *m.runtime;
  RegisterIncrement(m.fake);
  rt.NoteUnseenCode("helpers.cu");
  float *a = nullptr, *b = nullptr;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&a), kN * sizeof(float)) == cudaSuccess);
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&b), 64 * kMiB) == cudaSuccess);  // grows it
  CHECK_FALSE(rt.IsStandIn(a));
  CHECK_FALSE(rt.IsStandIn(b));
  REQUIRE(mgbd.Status().tasks_size() == 1);
  const int device = m.fake.DeviceOf(a);
  CHECK(m.fake.DeviceOf(b) == device);
  // A static task joins the process task: its memory and the eager memory share one GPU.
  mgb_task task = rt.TaskBegin(kMiB, kOne, kOne, nullptr, "static.cu:5");
  CHECK(rt.DeviceOfTask(task) == device);
  CHECK(mgbd.Status().tasks_size() == 1);
  rt.TaskEnd(task);
  CHECK(mgbd.Status().tasks_size() == 1);  // its allocations keep it open
  // A lazy launch on that real memory runs on its GPU, whichever device is current.
  m.fake.SetDevice(1 - device);
  REQUIRE(Prepare(rt, reinterpret_cast<const void *>(&IncrementKernel), {&a}, {sizeof a}) ==
          cudaSuccess);
  int current = -1;
  m.fake.GetDevice(&current);
  CHECK(current == device);
  REQUIRE(rt.Free(a) == cudaSuccess);
  CHECK(mgbd.Status().tasks_size() == 1);
  REQUIRE(rt.Free(b) == cudaSuccess);
  CHECK(mgbd.Status().tasks_size() == 0);  // the last allocation ends it
}

TEST_CASE("a launch using memory of two tasks on the same GPU moves nothing",
          "[runtime][boundaries]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  RegisterIncrement(m.fake);
  float *a = nullptr, *b = nullptr;
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&a), kN * sizeof(float)) == cudaSuccess);
  REQUIRE(Prepare(rt, reinterpret_cast<const void *>(&IncrementKernel), {&a}, {sizeof a}) ==
          cudaSuccess);
  REQUIRE(rt.Malloc(reinterpret_cast<void **>(&b), kN * sizeof(float)) == cudaSuccess);
  REQUIRE(Prepare(rt, reinterpret_cast<const void *>(&IncrementKernel), {&b}, {sizeof b}) ==
          cudaSuccess);
  const uint64_t task_a = rt.TaskOf(a), task_b = rt.TaskOf(b);
  REQUIRE(task_a != task_b);  // b was allocated after a's task was placed
  m.fake.ClearCalls();
  REQUIRE(Prepare(rt, reinterpret_cast<const void *>(&IncrementKernel), {&a, &b},
                  {sizeof a, sizeof b}) == cudaSuccess);
  CHECK(m.fake.CallsNamed("MemcpyPeer").empty());
  CHECK(m.fake.CallsNamed("Malloc").empty());
  CHECK(rt.TaskOf(a) == task_a);
  CHECK(rt.TaskOf(b) == task_b);
}

TEST_CASE("a zero-byte allocation is a null pointer, as CUDA gives, not a stand-in",
          "[runtime][boundaries]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  void *empty = &empty;
  REQUIRE(rt.Malloc(&empty, 0) == cudaSuccess);
  CHECK(empty == nullptr);  // a library given it (cuSPARSE's 0-byte workspace) sees NULL
  CHECK(rt.RealPtr(empty) == nullptr);
  CHECK(rt.Free(empty) == cudaSuccess);
  CHECK(mgbd.Status().tasks_size() == 0);
}

TEST_CASE("managed memory allocated outside a task is counted in a task until it is freed",
          "[runtime][boundaries]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  auto &rt = *m.runtime;
  float *shared = nullptr;
  REQUIRE(rt.MallocManaged(reinterpret_cast<void **>(&shared), 16 * kMiB, cudaMemAttachGlobal) ==
          cudaSuccess);
  CHECK_FALSE(rt.IsStandIn(shared));  // the host may touch it at once
  shared[0] = 1.0f;
  auto status = mgbd.Status();
  REQUIRE(status.tasks_size() == 1);
  CHECK(status.tasks(0).memory_bytes() >= 16 * kMiB);
  REQUIRE(rt.Free(shared) == cudaSuccess);
  CHECK(mgbd.Status().tasks_size() == 0);
}
