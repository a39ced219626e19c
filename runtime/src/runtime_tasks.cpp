// Task probes, placement onto a CUDA device, and the allocation guard.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "runtime.h"

namespace mgb::runtime {

namespace {
std::atomic<uint64_t> next_runtime_id{1};
}  // namespace

// Device addresses for the lazy layer: one range reserved through CUDA at the first lazy
// allocation, aligned to (and handed out in) the GPUs' mapping granularity.
static StandInArena::Reservation ReserveDeviceAddresses(CudaApi &api, size_t bytes) {
  size_t granularity = 0;
  uintptr_t base = 0;
  if (api.AddressGranularity(&granularity) != cudaSuccess || granularity == 0 ||
      api.ReserveAddresses(bytes, granularity, &base) != cudaSuccess) {
    return {};
  }
  return {base, granularity};
}

Runtime::Runtime(CudaApi &api, SessionConfig config)
    : id_(next_runtime_id++),
      api_(api),
      session_(std::move(config)),
      memory_(
          size_t{1} << 40, [&api](size_t bytes) { return ReserveDeviceAddresses(api, bytes); },
          [&api](uintptr_t base, size_t bytes) { api.FreeAddresses(base, bytes); }) {
  eager_ = session_.Config().eager;
}

Runtime::~Runtime() { Shutdown(); }

Runtime &Runtime::Global() {
  // Never destroyed (static destructors of the program may still call CUDA through libmgb); the
  // session ends in an atexit handler registered on first use.
  static Runtime *global = [] {
    auto *runtime = new Runtime(DefaultCudaApi(), SessionConfig::FromEnvironment());
    process_runtime_.store(runtime);
    std::atexit([] { Global().Shutdown(); });
    return runtime;
  }();
  return *global;
}

Runtime::ThreadState &Runtime::Thread() {
  thread_local std::unordered_map<uint64_t, ThreadState> states;
  return states[id_];
}

uint64_t Runtime::CurrentTaskId() {
  ThreadState &state = Thread();
  return state.stack.empty() ? 0 : state.stack.back();
}

std::string Runtime::Describe(uint64_t task_id) {
  std::lock_guard lock(mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return "task " + std::to_string(task_id);
  return "task " + std::to_string(task_id) + " at " + it->second->site;
}

LaunchShape Runtime::ShapeOf(mgb_dim3 grid, mgb_dim3 block, const void *kernel) {
  LaunchShape shape;
  shape.grid = {grid.x, grid.y, grid.z};
  shape.block = {block.x, block.y, block.z};
  return WithResources(shape, kernel);
}

LaunchShape Runtime::WithResources(LaunchShape shape, const void *kernel) {
  if (kernel == nullptr || shape.registers_per_thread != 0) return shape;
  const KernelResources resources = ResourcesOf(kernel);
  shape.registers_per_thread = resources.registers_per_thread;
  shape.shared_bytes_per_block = resources.shared_bytes_per_block;
  return shape;
}

Runtime::KernelResources Runtime::ResourcesOf(const void *kernel) {
  {
    std::lock_guard lock(mu_);
    if (auto known = kernel_resources_.find(kernel); known != kernel_resources_.end()) {
      return known->second;
    }
  }
  KernelResources resources;  // zeros, and asked again next time, when CUDA does not know it
  // Asking CUDA makes the current device's context when it has none: before the first task is
  // placed that is the program's device 0, while mgbd may put the task on another GPU. A stray
  // context there holds memory mgbd does not count, and under MPS it joins the process to that
  // GPU, so another client's fatal fault there tears this one down too (measured: one fault on
  // GPU 1 ended the jobs of both GPUs). Asked again once the task's GPU is current.
  if (!api_.DeviceHasContext(CurrentDevice())) return resources;
  cudaFuncAttributes attributes{};
  if (api_.FuncGetAttributes(&attributes, kernel) != cudaSuccess) return resources;
  resources.registers_per_thread = static_cast<uint32_t>(attributes.numRegs);
  resources.shared_bytes_per_block = static_cast<uint32_t>(attributes.sharedSizeBytes);
  std::lock_guard lock(mu_);
  kernel_resources_[kernel] = resources;
  return resources;
}

void Runtime::TellLaunch(uint64_t task_id, const LaunchShape &shape) {
  if (!core::CudaLaunchLimitViolation(shape).empty()) return;  // CUDA refuses it: nothing runs
  {
    std::lock_guard lock(mu_);
    auto it = tasks_.find(task_id);
    if (it == tasks_.end() || !it->second->RaisesTold(shape)) return;
  }
  std::shared_ptr<Client> client = session_.client();
  if (client == nullptr) return;
  // Only a count for placement: the launch goes ahead whatever mgbd answers.
  if (auto told = client->TaskLaunch(task_id, shape); !told.ok()) {
    std::fprintf(stderr, "mgb: could not tell mgbd the launch shape of %s: %s\n",
                 Describe(task_id).c_str(),
                 told.status().ToString(absl::StatusToStringMode::kWithNoExtraData).c_str());
  }
}

uint64_t Runtime::StartTask(uint64_t bytes, const LaunchShape &shape, const std::string &site,
                            bool lazy, bool library_call) {
  std::shared_ptr<Client> client = session_.client();
  if (client == nullptr) return 0;
  TellVisibleGpus(*client);
  uint64_t heap;
  {
    std::lock_guard lock(device_mu_);
    heap = heap_bytes_;
  }
  // The slack joins the budget (Task::Budget leaves out only the heap).
  const uint64_t asked = bytes + heap + session_.Config().task_slack_bytes;
  // A shape CUDA cannot launch is not mgbd's to refuse: the task is placed by memory alone and the
  // launch fails in CUDA as it would without mgb.
  const LaunchShape asked_shape =
      core::CudaLaunchLimitViolation(shape).empty() ? shape : LaunchShape{};
  // A library's first task in this process: a handle made before it (cublasCreate...) lives on
  // the device current now, and the library runs there; mgbd places the task there first while
  // it fits. (Measured on 2 x H200: a cuBLAS handle made on device 0 and its task placed on GPU 1
  // crashed in cuBLAS's dot kernel.) Not for kernel tasks: a context made by pinned host memory
  // would pull every job to device 0.
  std::string preferred_bus_id;
  if (library_call && !placed_any_.load()) {
    const int current = CurrentDevice();
    std::lock_guard lock(device_mu_);  // the bus ids TellVisibleGpus listed
    if (visible_bus_ids_ && current >= 0 && current < static_cast<int>(visible_bus_ids_->size())) {
      preferred_bus_id = (*visible_bus_ids_)[current];
    }
  }
  auto placed = waits_.Time(WaitClock::kBegin, [&] {
    return client->TaskBegin(asked, asked_shape, site, std::nullopt, preferred_bus_id);
  });
  if (!placed.ok()) {
    session_.Fail("task at " + site + " (" + std::to_string(asked) +
                  " bytes with the heap and slack) was not placed: " +
                  placed.status().ToString(absl::StatusToStringMode::kWithNoExtraData));
    return 0;
  }
  placed_any_.store(true);
  int device = static_cast<int>(placed->gpu_index);
  cudaError_t found =
      placed->pci_bus_id.empty() ? cudaSuccess : DeviceByBusId(placed->pci_bus_id, &device);
  if (found != cudaSuccess) {
    (void)client->TaskEnd(placed->task_id);
    // cudaErrorInvalidDevice: hidden by CUDA_VISIBLE_DEVICES; anything else: CUDA itself failed
    // (e.g. an MPS server put in a fault state by another client).
    session_.Fail("task at " + site + ": mgbd placed it on PCI " + placed->pci_bus_id +
                  ", which CUDA cannot open (cudaDeviceGetByPCIBusId: error " +
                  std::to_string(static_cast<int>(found)) +
                  (found == cudaErrorInvalidDevice ? ", hidden by CUDA_VISIBLE_DEVICES?" : "") +
                  ")");
    return 0;
  }
  int count = 0;
  if (DeviceCount(&count) != cudaSuccess || device >= count) {
    (void)client->TaskEnd(placed->task_id);
    session_.Fail("task at " + site + ": mgbd placed it on GPU " + std::to_string(device) +
                  " but CUDA sees " + std::to_string(count) + " device(s)");
    return 0;
  }
  if (session_.Config().trace) {
    std::fprintf(stderr,
                 "mgb-trace: task %llu (%s, %s, %llu bytes) placed on GPU %u = device %d; "
                 "current device was %d\n",
                 static_cast<unsigned long long>(placed->task_id), site.c_str(),
                 lazy ? "lazy" : "static", static_cast<unsigned long long>(asked),
                 placed->gpu_index, device, CurrentDevice());
  }
  api_.SetDevice(device);
  PrepareDevice(device);
  if (!lazy) PlacedOn(device);  // a lazy task's launch does it after replaying (runtime_lazy.cpp)
  auto task = std::make_unique<Task>();
  task->id = placed->task_id;
  task->device = device;
  task->site = site;
  task->lazy = lazy;
  task->reserved = asked;
  task->heap_bytes = heap;
  task->RaisesTold(shape);
  std::lock_guard lock(mu_);
  tasks_[task->id] = std::move(task);
  return placed->task_id;
}

void Runtime::FinishTask(uint64_t task_id) {
  int device;
  {
    std::lock_guard lock(mu_);
    auto it = tasks_.find(task_id);
    if (it == tasks_.end()) return;
    device = it->second->device;
    tasks_.erase(it);
  }
  usage_.Forget(task_id);
  // The task's work must be done before its memory may be counted free.
  int previous = CurrentDevice();
  api_.SetDevice(device);
  api_.DeviceSynchronize();
  if (previous != device && previous >= 0) api_.SetDevice(previous);
  if (session_.Config().trace) {
    std::fprintf(stderr, "mgb-trace: task %llu ends on device %d; current device %d\n",
                 static_cast<unsigned long long>(task_id), device, CurrentDevice());
  }
  if (std::shared_ptr<Client> client = session_.client()) {
    absl::Status ended = client->TaskEnd(task_id);
    if (!ended.ok()) {
      std::fprintf(stderr, "mgb: ending task %llu: %s\n", static_cast<unsigned long long>(task_id),
                   ended.ToString(absl::StatusToStringMode::kWithNoExtraData).c_str());
    }
  }
}

mgb_task Runtime::TaskBegin(size_t memory_bytes, mgb_dim3 grid, mgb_dim3 block, const void *kernel,
                            const char *site) {
  if (!session_.Managed()) return 0;
  ThreadState &state = Thread();
  if (!state.stack.empty()) {  // nested: join the outer task; the guard grows it if needed
    uint64_t outer = state.stack.back();
    std::lock_guard lock(mu_);
    auto it = tasks_.find(outer);
    if (it != tasks_.end()) {
      ++it->second->depth;
      return outer;
    }
  }
  if (Eager()) {  // every static task joins the process task (runtime_eager.cpp)
    const LaunchShape shape = ShapeOf(grid, block, kernel);
    uint64_t id = ProcessTask(memory_bytes, shape, site ? site : "?");
    if (id == 0) return 0;
    {
      std::lock_guard lock(mu_);
      ++tasks_[id]->depth;
    }
    state.stack.push_back(id);
    api_.SetDevice(DeviceOfTask(id));
    // On the task's GPU now: the kernel's registers and shared memory, if not known before.
    TellLaunch(id, WithResources(shape, kernel));
    return id;
  }
  uint64_t id = StartTask(memory_bytes, ShapeOf(grid, block, kernel), site ? site : "?", false,
                          kernel == nullptr);
  if (id == 0) return 0;
  // On the task's GPU now: the kernel's registers and shared memory, if not known before.
  if (kernel != nullptr) TellLaunch(id, ShapeOf(grid, block, kernel));
  {
    std::lock_guard lock(mu_);
    tasks_[id]->depth = 1;
  }
  state.stack.push_back(id);
  return id;
}

void Runtime::FlushReleases() {
  if (std::shared_ptr<Client> client = session_.client()) client->Flush();
}

void Runtime::TaskEnd(mgb_task task) {
  if (task == 0) return;
  ThreadState &state = Thread();
  if (state.stack.empty() || state.stack.back() != task) {
    std::fprintf(stderr, "mgb: mgb_task_end(%llu): not the innermost task begun on this thread\n",
                 static_cast<unsigned long long>(task));
    return;
  }
  {
    std::lock_guard lock(mu_);
    auto it = tasks_.find(task);
    if (it != tasks_.end()) {
      if (--it->second->depth > 0) return;  // an inner begin joined it
      // Stand-ins bound to it keep the reservation alive: it becomes a lazy task.
      if (it->second->objects > 0) it->second->lazy = true;
    }
  }
  state.stack.pop_back();
  bool still_used;
  {
    std::lock_guard lock(mu_);
    auto it = tasks_.find(task);
    still_used = it != tasks_.end() && it->second->objects > 0;
  }
  if (!still_used) FinishTask(task);
  if (!state.stack.empty()) {
    int device = DeviceOfTask(state.stack.back());
    if (device >= 0) api_.SetDevice(device);
  }
}

// ---- the guard

Runtime::Reserve Runtime::ReserveInTask(uint64_t task_id, uint64_t bytes,
                                        bool allocation_may_fail) {
  uint64_t missing;
  {
    std::lock_guard lock(mu_);
    auto it = tasks_.find(task_id);
    if (it == tasks_.end()) return Reserve::kDone;
    Task &task = *it->second;
    uint64_t wanted = task.allocated + task.pending + bytes;
    task.pending += bytes;
    if (wanted <= task.Budget()) return Reserve::kDone;
    missing = wanted - task.Budget();
  }
  std::shared_ptr<Client> client = session_.client();
  if (client == nullptr) return Reserve::kDone;
  // A wrong estimate costs waiting here, never another program's out-of-memory.
  auto grown = waits_.Time(WaitClock::kGrow, [&] { return client->TaskGrow(task_id, missing); });
  if (!grown.ok()) {
    {
      std::lock_guard lock(mu_);
      auto it = tasks_.find(task_id);
      if (it != tasks_.end()) it->second->pending -= bytes;
    }
    const std::string what =
        Describe(task_id) + " could not grow by " + std::to_string(missing) +
        " bytes: " + grown.status().ToString(absl::StatusToStringMode::kWithNoExtraData);
    const absl::StatusCode code = grown.status().code();
    if (allocation_may_fail && (code == absl::StatusCode::kResourceExhausted ||
                                code == absl::StatusCode::kInvalidArgument)) {
      // mgbd refused for good (docs/service.md, "Grow liveness"): this allocation fails the way
      // CUDA's out-of-memory would, and the program decides what to do.
      std::fprintf(stderr, "mgb: %s; the allocation returns cudaErrorMemoryAllocation\n",
                   what.c_str());
      return Reserve::kRefused;
    }
    session_.Fail(what);
    return Reserve::kUnmanaged;
  }
  std::lock_guard lock(mu_);
  auto it = tasks_.find(task_id);
  if (it != tasks_.end() && *grown > it->second->reserved) it->second->reserved = *grown;
  return Reserve::kDone;
}

void Runtime::CommitInTask(uint64_t task_id, uint64_t reserved_bytes, uint64_t allocated_bytes) {
  std::lock_guard lock(mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return;
  it->second->pending -= reserved_bytes;
  it->second->allocated += allocated_bytes;
  if (allocated_bytes != 0) usage_.Report(task_id, it->second->allocated);
}

void Runtime::ReleaseFromTask(uint64_t task_id, uint64_t bytes) {
  std::lock_guard lock(mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return;
  Task &task = *it->second;
  task.allocated = task.allocated > bytes ? task.allocated - bytes : 0;
  usage_.Report(task_id, task.allocated);
}

cudaError_t Runtime::GuardedMalloc(uint64_t task_id, void **ptr, size_t bytes) {
  switch (ReserveInTask(task_id, bytes, /*allocation_may_fail=*/true)) {
    case Reserve::kRefused: return cudaErrorMemoryAllocation;
    case Reserve::kUnmanaged: return api_.Malloc(ptr, bytes);  // unmanaged from now on
    case Reserve::kDone: break;
  }
  cudaError_t error = api_.Malloc(ptr, bytes);
  CommitInTask(task_id, bytes, error == cudaSuccess ? bytes : 0);
  if (error == cudaSuccess) {
    std::lock_guard lock(mu_);
    reals_[reinterpret_cast<uintptr_t>(*ptr)] = RealAllocation{bytes, task_id};
  }
  return error;
}

cudaError_t Runtime::ReleaseReal(void *ptr) {
  cudaError_t error = api_.Free(ptr);
  if (error != cudaSuccess || ptr == nullptr) return error;
  RealAllocation allocation;
  {
    std::lock_guard lock(mu_);
    auto it = reals_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == reals_.end()) return error;
    allocation = it->second;
    reals_.erase(it);
  }
  if (allocation.task_id != 0) ReleaseFromTask(allocation.task_id, allocation.size);
  if (allocation.holds_task) {
    bool end_task = false;
    {
      std::lock_guard lock(mu_);
      if (auto it = tasks_.find(allocation.task_id); it != tasks_.end()) {
        Task &task = *it->second;
        end_task = --task.objects == 0 && task.lazy && task.depth == 0;
      }
    }
    if (end_task) FinishTask(allocation.task_id);
  }
  return error;
}

// ---- device setup: limits and __constant__ data follow the program onto every GPU it lands on

cudaError_t Runtime::DeviceByBusId(const std::string &bus_id, int *device) {
  std::lock_guard lock(device_mu_);
  if (auto known = device_by_bus_.find(bus_id); known != device_by_bus_.end()) {
    *device = known->second;
    return cudaSuccess;
  }
  cudaError_t found = api_.DeviceGetByPCIBusId(device, bus_id.c_str());
  if (found == cudaSuccess) device_by_bus_[bus_id] = *device;
  return found;
}

void Runtime::TellVisibleGpus(Client &client) {
  std::vector<std::string> ids;
  {
    std::lock_guard lock(device_mu_);
    if (told_visible_ == &client) return;
    if (!visible_bus_ids_) {
      int count = device_count_;
      if (count < 0 && api_.GetDeviceCount(&count) != cudaSuccess) return;  // asked again later
      device_count_ = count;
      std::vector<std::string> found;
      for (int device = 0; device < count; ++device) {
        char bus_id[32] = {};
        if (api_.DeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) return;
        found.emplace_back(bus_id);
        device_by_bus_[bus_id] = device;
      }
      visible_bus_ids_ = std::move(found);
    }
    told_visible_ = &client;
    ids = *visible_bus_ids_;
  }
  client.SetVisibleGpus(std::move(ids));
}

cudaError_t Runtime::DeviceCount(int *count) {
  std::lock_guard lock(device_mu_);
  if (device_count_ < 0) {
    if (cudaError_t error = api_.GetDeviceCount(count); error != cudaSuccess) return error;
    device_count_ = *count;
  }
  *count = device_count_;
  return cudaSuccess;
}

void Runtime::PrepareDevice(int device) {
  std::lock_guard lock(device_mu_);
  if (!prepared_devices_.insert(device).second) return;
  int previous = CurrentDevice();
  api_.SetDevice(device);
  for (const auto &[limit, value] : limits_) api_.DeviceSetLimit(limit, value);
  for (const SymbolWrite &write : symbol_writes_) {
    api_.MemcpyToSymbol(write.symbol, write.bytes.data(), write.bytes.size(), write.offset,
                        cudaMemcpyHostToDevice);
  }
  if (previous >= 0 && previous != device) api_.SetDevice(previous);
}

// ---- introspection

int Runtime::DeviceOfTask(uint64_t task_id) {
  std::lock_guard lock(mu_);
  auto it = tasks_.find(task_id);
  return it == tasks_.end() ? -1 : it->second->device;
}

uint64_t Runtime::ReservedBytes(uint64_t task_id) {
  std::lock_guard lock(mu_);
  auto it = tasks_.find(task_id);
  return it == tasks_.end() ? 0 : it->second->reserved;
}

size_t Runtime::OpenTasks() {
  std::lock_guard lock(mu_);
  return tasks_.size();
}

void Runtime::Shutdown() {
  std::vector<uint64_t> open;
  {
    std::lock_guard lock(mu_);
    for (const auto &[id, task] : tasks_) open.push_back(id);
    tasks_.clear();
  }
  usage_.Stop();
  // No device synchronisation at exit: CUDA may already be torn down; mgbd frees the memory.
  if (std::shared_ptr<Client> client = session_.client()) {
    for (uint64_t id : open) (void)client->TaskEnd(id);
  }
  session_.Close();
  if (!session_.config().report_waits) return;
  if (const std::string line = waits_.Line(); !line.empty() && !waits_printed_.exchange(true)) {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

}  // namespace mgb::runtime
