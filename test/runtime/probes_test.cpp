// Task probes: placement, device binding, nesting, threads, the heap limit.
#include <atomic>
#include <barrier>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "mgb/client.h"
#include "runtime_fixture.h"

using namespace mgb::test;
using mgb::Client;
using mgb::LaunchShape;
using mgb::runtime::FailurePolicy;
using mgb::runtime::kDefaultHeapBytes;

namespace {
const mgb_dim3 kOne{1, 1, 1};
const mgb_dim3 kBlock{256, 1, 1};
const mgb_dim3 kWideGrid{1000, 1, 1};
}  // namespace

TEST_CASE("task_begin waits for placement, selects the GPU and task_end releases it",
          "[runtime][probes]") {
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB});
  ManagedRuntime m(mgbd);
  mgb_task task = m.runtime->TaskBegin(3 * kMiB, kWideGrid, kBlock, nullptr, "probe.cu:10");
  REQUIRE(task != 0);
  int device = m.runtime->DeviceOfTask(task);
  int current = -1;
  m.fake.GetDevice(&current);
  CHECK(current == device);

  auto status = mgbd.Status();
  REQUIRE(status.tasks_size() == 1);
  CHECK(status.tasks(0).memory_bytes() == 3 * kMiB + kDefaultHeapBytes);  // heap included
  CHECK(status.tasks(0).label() == "probe.cu:10");
  REQUIRE(status.tasks(0).has_gpu_index());
  CHECK(static_cast<int>(status.tasks(0).gpu_index()) == device);

  void *p = nullptr;
  REQUIRE(m.runtime->Malloc(&p, kMiB) == cudaSuccess);
  CHECK_FALSE(m.runtime->IsStandIn(p));  // inside a task: real memory at once
  CHECK(m.fake.DeviceOf(p) == device);
  REQUIRE(m.runtime->Free(p) == cudaSuccess);

  m.fake.ClearCalls();
  m.runtime->TaskEnd(task);
  auto syncs = m.fake.CallsNamed("DeviceSynchronize");
  REQUIRE(syncs.size() == 1);  // the task's work is finished before mgbd frees its memory
  CHECK(syncs[0].device == device);
  CHECK(mgbd.Status().tasks_size() == 0);
}

TEST_CASE("a task's GPU number and the device count are asked of CUDA once, not per task",
          "[runtime][probes]") {
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB});
  ManagedRuntime m(mgbd);
  std::set<int> devices;
  for (int i = 0; i < 6; ++i) {  // two at a time: the second goes to the emptier GPU
    mgb_task a = m.runtime->TaskBegin(600 * kMiB, kWideGrid, kBlock, nullptr, "probe.cu:1");
    REQUIRE(a != 0);
    devices.insert(m.runtime->DeviceOfTask(a));
    std::thread([&] {
      mgb_task b = m.runtime->TaskBegin(600 * kMiB, kWideGrid, kBlock, nullptr, "probe.cu:2");
      REQUIRE(b != 0);
      devices.insert(m.runtime->DeviceOfTask(b));
      m.runtime->TaskEnd(b);
    }).join();
    m.runtime->TaskEnd(a);
  }
  CHECK(devices.size() == 2);
  // Each GPU's number comes from listing the process's GPUs once (TellVisibleGpus).
  CHECK(m.fake.BusIdListings() == 2);
  CHECK(m.fake.BusIdLookups() == 0);
  CHECK(m.fake.DeviceCountQueries() == 1);
}

TEST_CASE("a process that cannot open a GPU never gets a task there", "[runtime][probes]") {
  // Found on 2 x H100: a rewritten program under `mgb run`, which shows it one GPU
  // (CUDA_VISIBLE_DEVICES), had its task placed on the other one and exited with 69.
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB});
  ManagedRuntime m(mgbd, 1, TestConfig(mgbd.socket(), FailurePolicy::kUnmanaged));
  m.fake.SetFirstBusId(1);       // CUDA_VISIBLE_DEVICES=1: its device 0 is mgbd's GPU 1
  for (int i = 0; i < 3; ++i) {  // GPU 0 is the emptier one each time
    mgb_task task = m.runtime->TaskBegin(kMiB, kWideGrid, kBlock, nullptr, "probe.cu:1");
    REQUIRE(task != 0);
    CHECK(m.runtime->DeviceOfTask(task) == 0);
    auto status = mgbd.Status();
    REQUIRE(status.tasks_size() == 1);
    CHECK(status.tasks(0).gpu_index() == 1);
    m.runtime->TaskEnd(task);
  }
  CHECK(mgbd.Status().tasks_size() == 0);
}

TEST_CASE("a library's first task goes to the device current before it, where its handle lives",
          "[runtime][probes]") {
  // Found on 2 x H200: a cuBLAS handle made on device 0 before the process's first task, and that
  // task placed on GPU 1 (GPU 0 busy): cuBLAS's dot kernel hit an illegal address.
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB});
  auto hog = Client::Connect(mgbd.socket(), getpid(), "hog");
  REQUIRE(hog.ok());
  REQUIRE((*hog)->TaskBegin(kMiB, LaunchShape{{100000, 1, 1}, {1024, 1, 1}}, "busy").ok());
  {
    ManagedRuntime library(mgbd);  // its current device is 0, GPU 0 has the most warps in use
    mgb_task task = library.runtime->TaskBegin(kMiB, kOne, kOne, nullptr, "lib.cu:1");
    REQUIRE(task != 0);
    CHECK(library.runtime->DeviceOfTask(task) == 0);
    library.runtime->TaskEnd(task);
  }
  ManagedRuntime kernels(mgbd);  // a kernel's task is placed by the policy alone
  static int kernel_tag;
  kernels.fake.RegisterKernel(&kernel_tag, {sizeof(void *)}, [](FakeLaunch &) {});
  mgb_task task = kernels.runtime->TaskBegin(kMiB, kWideGrid, kBlock, &kernel_tag, "k.cu:1");
  REQUIRE(task != 0);
  CHECK(kernels.runtime->DeviceOfTask(task) == 1);
  kernels.runtime->TaskEnd(task);
}

TEST_CASE("a launch shape CUDA refuses is placed by memory alone, not refused by mgbd",
          "[runtime][probes]") {
  // The program then gets CUDA's own error at the launch, as it would without mgb.
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd);
  mgb_task task = m.runtime->TaskBegin(kMiB, kWideGrid, mgb_dim3{1, 1, 128}, nullptr, "bad.cu:1");
  REQUIRE(task != 0);
  auto status = mgbd.Status();
  REQUIRE(status.tasks_size() == 1);
  CHECK(status.tasks(0).warps() == 2);  // no shape: one one-thread block (half an SM's warps)
  m.runtime->TaskEnd(task);
}

TEST_CASE("a kernel's registers are asked of CUDA once, not at every task", "[runtime][probes]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd);
  static int kernel_tag;
  const void *kernel = &kernel_tag;
  m.fake.RegisterKernel(kernel, {sizeof(void *)}, [](FakeLaunch &) {});
  for (int i = 0; i < 5; ++i) {
    mgb_task task = m.runtime->TaskBegin(kMiB, kWideGrid, kBlock, kernel, "probe.cu:1");
    REQUIRE(task != 0);
    m.runtime->TaskEnd(task);
  }
  CHECK(m.fake.FuncAttributeQueries() == 1);
}

TEST_CASE("a kernel's registers are asked on the task's GPU, never on another device first",
          "[runtime][probes]") {
  // Asking CUDA makes the current device's context. Before placement that is device 0, but GPU 0
  // is too small for this task: a context there would hold memory mgbd does not count, and
  // under MPS tie the process to a GPU it does not use.
  MgbdProcess mgbd({64 * kMiB, 1024 * kMiB});
  ManagedRuntime m(mgbd);
  static int kernel_tag;
  const void *kernel = &kernel_tag;
  m.fake.RegisterKernel(kernel, {sizeof(void *)}, [](FakeLaunch &) {});
  mgb_task task = m.runtime->TaskBegin(256 * kMiB, kWideGrid, kBlock, kernel, "probe.cu:1");
  REQUIRE(task != 0);
  REQUIRE(m.runtime->DeviceOfTask(task) == 1);
  CHECK(m.fake.Contexts() == std::set<int>{1});
  CHECK(m.fake.FuncAttributeQueries() == 1);  // asked once, on GPU 1, and told to mgbd then
  m.runtime->TaskEnd(task);
}

TEST_CASE("a nested begin joins the outer task", "[runtime][probes]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  mgb_task outer = m.runtime->TaskBegin(kMiB, kOne, kBlock, nullptr, "outer");
  mgb_task inner = m.runtime->TaskBegin(kMiB, kOne, kBlock, nullptr, "inner");
  CHECK(inner == outer);
  CHECK(mgbd.Status().tasks_size() == 1);
  m.runtime->TaskEnd(inner);
  CHECK(mgbd.Status().tasks_size() == 1);  // the outer one still runs
  m.runtime->TaskEnd(outer);
  CHECK(mgbd.Status().tasks_size() == 0);
  // Tasks in a loop: each iteration is a task of its own.
  for (int i = 0; i < 3; ++i) {
    mgb_task t = m.runtime->TaskBegin(kMiB, kOne, kBlock, nullptr, "loop");
    REQUIRE(t != 0);
    CHECK(t != outer);
    m.runtime->TaskEnd(t);
  }
  CHECK(m.runtime->OpenTasks() == 0);
}

TEST_CASE("tasks on two threads at once run on their own GPUs", "[runtime][probes]") {
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB}, "mgb", /*spread_tasks=*/true);
  ManagedRuntime m(mgbd);
  std::barrier both_placed(2);
  int devices[2] = {-1, -1};
  int allocation_devices[2] = {-1, -1};
  auto work = [&](int i) {
    mgb_task task = m.runtime->TaskBegin(8 * kMiB, kWideGrid, kBlock, nullptr, "thread");
    both_placed.arrive_and_wait();  // both hold their GPU now
    devices[i] = m.runtime->DeviceOfTask(task);
    void *p = nullptr;
    m.runtime->Malloc(&p, 4 * kMiB);
    allocation_devices[i] = m.fake.DeviceOf(p);
    m.runtime->Free(p);
    both_placed.arrive_and_wait();
    m.runtime->TaskEnd(task);
  };
  std::thread a(work, 0), b(work, 1);
  a.join();
  b.join();
  CHECK(devices[0] != devices[1]);  // policy mgb: the second goes where fewer warps are in use
  CHECK(allocation_devices[0] == devices[0]);
  CHECK(allocation_devices[1] == devices[1]);
  CHECK(mgbd.Status().tasks_size() == 0);
}

TEST_CASE("the malloc heap limit the program sets is part of each task", "[runtime][probes]") {
  MgbdProcess mgbd({1024 * kMiB});
  ManagedRuntime m(mgbd, 1);
  REQUIRE(m.runtime->DeviceSetLimit(cudaLimitMallocHeapSize, 64 * kMiB) == cudaSuccess);
  CHECK(m.fake.CallsNamed("DeviceSetLimit").empty());  // recorded: no GPU chosen yet
  mgb_task task = m.runtime->TaskBegin(kMiB, kOne, kBlock, nullptr, "heap");
  REQUIRE(mgbd.Status().tasks_size() == 1);
  CHECK(mgbd.Status().tasks(0).memory_bytes() == kMiB + 64 * kMiB);
  CHECK(m.fake.LimitOn(0, cudaLimitMallocHeapSize) == 64 * kMiB);  // applied on the task's GPU
  m.runtime->TaskEnd(task);
}

TEST_CASE("cudaSetDevice is validated and recorded but does not move work", "[runtime][probes]") {
  MgbdProcess mgbd({1024 * kMiB, 1024 * kMiB});
  ManagedRuntime m(mgbd);
  CHECK(m.runtime->SetDevice(5) == cudaErrorInvalidDevice);
  CHECK(m.runtime->SetDevice(1) == cudaSuccess);
  CHECK(m.fake.CallsNamed("SetDevice").empty());
}
