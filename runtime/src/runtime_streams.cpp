// Streams and events: the program gets stand-in handles; each maps to one real stream/event per
// device, created on the device where it is first used. So a stream created at program start works
// for tasks placed later on any GPU.
#include "runtime.h"

namespace mgb::runtime {

int Runtime::CurrentDevice() {
  int device = -1;
  return api_.GetDevice(&device) == cudaSuccess ? device : -1;
}

LazyHandle *Runtime::HandleLocked(const void *handle) {
  auto it = handles_.find(reinterpret_cast<uintptr_t>(handle));
  return it == handles_.end() ? nullptr : it->second.get();
}

void *Runtime::RealHandle(const void *handle, int device) {
  std::lock_guard lock(mu_);
  LazyHandle *lazy = HandleLocked(handle);
  if (lazy == nullptr) return const_cast<void *>(handle);
  if (auto it = lazy->real.find(device); it != lazy->real.end()) return it->second;
  int previous = CurrentDevice();
  if (device >= 0 && device != previous) api_.SetDevice(device);
  void *real = nullptr;
  cudaError_t error =
      lazy->is_event
          ? api_.EventCreateWithFlags(reinterpret_cast<cudaEvent_t *>(&real), lazy->flags)
          : api_.StreamCreateWithFlags(reinterpret_cast<cudaStream_t *>(&real), lazy->flags);
  if (device >= 0 && device != previous) api_.SetDevice(previous);
  if (error != cudaSuccess) return const_cast<void *>(handle);  // CUDA reports it at first use
  lazy->real[device] = real;
  return real;
}

cudaStream_t Runtime::StreamOn(cudaStream_t stream, int device) {
  if (!IsStandIn(stream)) return stream;
  return static_cast<cudaStream_t>(RealHandle(stream, device));
}

cudaStream_t Runtime::RealStream(cudaStream_t stream) {
  return IsStandIn(stream) ? StreamOn(stream, CurrentDevice()) : stream;
}

cudaError_t Runtime::StreamCreate(cudaStream_t *stream, unsigned int flags) {
  if (!session_.Managed()) return api_.StreamCreateWithFlags(stream, flags);
  if (stream == nullptr) return cudaErrorInvalidValue;
  uintptr_t address = handle_addresses_.Allocate(1);
  if (address == 0) return cudaErrorMemoryAllocation;
  auto handle = std::make_unique<LazyHandle>();
  handle->flags = flags;
  std::lock_guard lock(mu_);
  handles_[address] = std::move(handle);
  *stream = reinterpret_cast<cudaStream_t>(address);
  return cudaSuccess;
}

cudaError_t Runtime::EventCreate(cudaEvent_t *event, unsigned int flags) {
  if (!session_.Managed()) return api_.EventCreateWithFlags(event, flags);
  if (event == nullptr) return cudaErrorInvalidValue;
  uintptr_t address = handle_addresses_.Allocate(1);
  if (address == 0) return cudaErrorMemoryAllocation;
  auto handle = std::make_unique<LazyHandle>();
  handle->is_event = true;
  handle->flags = flags;
  std::lock_guard lock(mu_);
  handles_[address] = std::move(handle);
  *event = reinterpret_cast<cudaEvent_t>(address);
  return cudaSuccess;
}

namespace {
// Applies `call` to every real handle behind a stand-in; the first error wins.
template <class Call>
cudaError_t ForEachReal(const std::map<int, void *> &reals, Call call) {
  cudaError_t result = cudaSuccess;
  for (const auto &[device, real] : reals) {
    cudaError_t error = call(real);
    if (result == cudaSuccess) result = error;
  }
  return result;
}
}  // namespace

cudaError_t Runtime::StreamDestroy(cudaStream_t stream) {
  if (!IsStandIn(stream)) return api_.StreamDestroy(stream);
  std::unique_ptr<LazyHandle> handle;
  {
    std::lock_guard lock(mu_);
    auto it = handles_.find(reinterpret_cast<uintptr_t>(stream));
    if (it == handles_.end() || it->second->is_event) return cudaErrorInvalidResourceHandle;
    handle = std::move(it->second);
    handles_.erase(it);
  }
  handle_addresses_.Release(reinterpret_cast<uintptr_t>(stream), 1);
  return ForEachReal(handle->real, [&](void *real) {
    return api_.StreamDestroy(static_cast<cudaStream_t>(real));
  });
}

cudaError_t Runtime::EventDestroy(cudaEvent_t event) {
  if (!IsStandIn(event)) return api_.EventDestroy(event);
  std::unique_ptr<LazyHandle> handle;
  {
    std::lock_guard lock(mu_);
    auto it = handles_.find(reinterpret_cast<uintptr_t>(event));
    if (it == handles_.end() || !it->second->is_event) return cudaErrorInvalidResourceHandle;
    handle = std::move(it->second);
    handles_.erase(it);
  }
  handle_addresses_.Release(reinterpret_cast<uintptr_t>(event), 1);
  return ForEachReal(handle->real,
                     [&](void *real) { return api_.EventDestroy(static_cast<cudaEvent_t>(real)); });
}

cudaError_t Runtime::StreamSynchronize(cudaStream_t stream) {
  if (!IsStandIn(stream)) return api_.StreamSynchronize(stream);
  std::map<int, void *> reals;
  {
    std::lock_guard lock(mu_);
    LazyHandle *handle = HandleLocked(stream);
    if (handle == nullptr || handle->is_event) return cudaErrorInvalidResourceHandle;
    reals = handle->real;
  }
  return ForEachReal(
      reals, [&](void *real) { return api_.StreamSynchronize(static_cast<cudaStream_t>(real)); });
}

cudaError_t Runtime::StreamQuery(cudaStream_t stream) {
  if (!IsStandIn(stream)) return api_.StreamQuery(stream);
  std::map<int, void *> reals;
  {
    std::lock_guard lock(mu_);
    LazyHandle *handle = HandleLocked(stream);
    if (handle == nullptr || handle->is_event) return cudaErrorInvalidResourceHandle;
    reals = handle->real;
  }
  return ForEachReal(reals,
                     [&](void *real) { return api_.StreamQuery(static_cast<cudaStream_t>(real)); });
}

// A stand-in event's latest record (nullopt: never recorded, which CUDA treats as complete). A
// deferred record is made on the current device first: the program is about to wait on it.
std::optional<cudaEvent_t> Runtime::RecordedEvent(cudaEvent_t event) {
  if (!IsStandIn(event)) return event;
  std::unique_lock lock(mu_);
  LazyHandle *handle = HandleLocked(event);
  if (handle != nullptr && handle->pending) {
    cudaStream_t stream = handle->pending_stream;
    lock.unlock();
    RecordOn(event, stream, CurrentDevice());
    lock.lock();
    handle = HandleLocked(event);
  }
  if (handle == nullptr || handle->last_recorded_device < 0) return std::nullopt;
  return static_cast<cudaEvent_t>(handle->real[handle->last_recorded_device]);
}

cudaError_t Runtime::StreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  std::optional<cudaEvent_t> recorded = RecordedEvent(event);
  if (!recorded) return cudaSuccess;
  return api_.StreamWaitEvent(RealStream(stream), *recorded, flags);
}

// A thread that has not been given a GPU yet records on a GPU its work will not run on (the usual
// `start timer; launch; stop timer` around the first lazy launch), and cudaEventElapsedTime then
// fails across devices. So such a record waits until mgbd places the thread's next task: no work
// of this thread runs in between, so the measured interval is the same.
cudaError_t Runtime::EventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!IsStandIn(event)) return api_.EventRecord(event, RealStream(stream));
  ThreadState &thread = Thread();
  if (thread.placed_device < 0 && CurrentTaskId() == 0) {
    std::lock_guard lock(mu_);
    LazyHandle *handle = HandleLocked(event);
    if (handle == nullptr || !handle->is_event) return cudaErrorInvalidResourceHandle;
    if (!handle->pending) thread.pending_records.push_back(event);
    handle->pending = true;
    handle->pending_stream = stream;
    return cudaSuccess;
  }
  return RecordOn(event, stream, CurrentDevice());
}

cudaError_t Runtime::RecordOn(cudaEvent_t event, cudaStream_t stream, int device) {
  auto real = static_cast<cudaEvent_t>(RealHandle(event, device));
  {
    std::lock_guard lock(mu_);
    if (LazyHandle *handle = HandleLocked(event)) {
      handle->last_recorded_device = device;
      handle->pending = false;
    }
  }
  return api_.EventRecord(real, StreamOn(stream, device));
}

void Runtime::PlacedOn(int device) {
  ThreadState &thread = Thread();
  thread.placed_device = device;
  std::vector<cudaEvent_t> pending;
  pending.swap(thread.pending_records);
  for (cudaEvent_t event : pending) {
    cudaStream_t stream;
    {
      std::lock_guard lock(mu_);
      LazyHandle *handle = HandleLocked(event);
      if (handle == nullptr || !handle->pending) continue;  // destroyed, or recorded since
      stream = handle->pending_stream;
    }
    RecordOn(event, stream, device);
  }
}

cudaError_t Runtime::EventSynchronize(cudaEvent_t event) {
  std::optional<cudaEvent_t> recorded = RecordedEvent(event);
  return recorded ? api_.EventSynchronize(*recorded) : cudaSuccess;
}

cudaError_t Runtime::EventQuery(cudaEvent_t event) {
  std::optional<cudaEvent_t> recorded = RecordedEvent(event);
  return recorded ? api_.EventQuery(*recorded) : cudaSuccess;
}

cudaError_t Runtime::EventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  // An event never recorded gets a fresh real one here, so CUDA answers with its own error.
  auto real = [&](cudaEvent_t event) {
    std::optional<cudaEvent_t> recorded = RecordedEvent(event);
    return recorded ? *recorded : static_cast<cudaEvent_t>(RealHandle(event, CurrentDevice()));
  };
  return api_.EventElapsedTime(ms, real(start), real(end));
}

// ---- device choice

cudaError_t Runtime::DeviceSetLimit(cudaLimit limit, size_t value) {
  if (!session_.Managed()) return api_.DeviceSetLimit(limit, value);
  // In a task CUDA answers on the task's GPU; outside one no GPU is chosen yet, so the limit is
  // kept for each GPU a task lands on, and the refusals CUDA gives whatever the GPU are given
  // now: a program that checks this call stops where it stops as written.
  const cudaError_t answer =
      CurrentTaskId() != 0 ? api_.DeviceSetLimit(limit, value) : LimitRefusal(limit);
  if (answer != cudaSuccess) return answer;
  std::lock_guard lock(device_mu_);
  limits_[limit] = value;
  if (limit == cudaLimitMallocHeapSize) heap_bytes_ = value;  // counted in later tasks
  return cudaSuccess;
}

// What cudaDeviceSetLimit refuses before it looks at the value: a limit CUDA does not have, and
// the device runtime's sync depth on compute capability 9.0 and later (CUDA 12 removed device-side
// cudaDeviceSynchronize there; the program's own device tells).
cudaError_t Runtime::LimitRefusal(cudaLimit limit) {
  switch (limit) {
    case cudaLimitStackSize:
    case cudaLimitPrintfFifoSize:
    case cudaLimitMallocHeapSize:
    case cudaLimitDevRuntimePendingLaunchCount:
    case cudaLimitMaxL2FetchGranularity:
    case cudaLimitPersistingL2CacheSize: return cudaSuccess;
    case cudaLimitDevRuntimeSyncDepth: {
      int major = 0;
      if (api_.DeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                                  Thread().program_device) != cudaSuccess) {
        return cudaSuccess;  // unknown: kept, as before
      }
      return major >= 9 ? cudaErrorUnsupportedLimit : cudaSuccess;
    }
  }
  return cudaErrorUnsupportedLimit;
}

cudaError_t Runtime::DeviceEnablePeerAccess(int peer, unsigned int flags) {
  if (!session_.Managed()) return api_.DeviceEnablePeerAccess(peer, flags);
  return OnProgramDevice([&] { return api_.DeviceEnablePeerAccess(peer, flags); });
}

cudaError_t Runtime::DeviceDisablePeerAccess(int peer) {
  if (!session_.Managed()) return api_.DeviceDisablePeerAccess(peer);
  return OnProgramDevice([&] { return api_.DeviceDisablePeerAccess(peer); });
}

cudaError_t Runtime::OnProgramDevice(const std::function<cudaError_t()> &call) {
  const int chosen = Thread().program_device;
  const int previous = CurrentDevice();
  if (previous != chosen) {
    if (cudaError_t error = api_.SetDevice(chosen); error != cudaSuccess) return error;
  }
  const cudaError_t answer = call();
  if (previous >= 0 && previous != chosen) api_.SetDevice(previous);
  return answer;
}

cudaError_t Runtime::CheckDevice(int device) {
  int count = 0;
  if (cudaError_t error = DeviceCount(&count); error != cudaSuccess) return error;
  return device < 0 || device >= count ? cudaErrorInvalidDevice : cudaSuccess;
}

cudaError_t Runtime::SetDevice(int device) {
  if (!session_.Managed()) return api_.SetDevice(device);
  // Validated like CUDA does, then only recorded: mgbd decides where work runs.
  if (cudaError_t error = CheckDevice(device); error != cudaSuccess) return error;
  Thread().program_device = device;
  return cudaSuccess;
}

cudaError_t Runtime::GetDevice(int *device) {
  if (!session_.Managed()) return api_.GetDevice(device);
  if (device == nullptr) return cudaErrorInvalidValue;
  // The program's own numbering: what it passes on to cudaGetDeviceProperties & co. names the
  // GPU it chose, whichever GPU libmgb made current for its tasks.
  *device = Thread().program_device;
  return cudaSuccess;
}

cudaError_t Runtime::DeviceSynchronize() {
  if (!session_.Managed()) return api_.DeviceSynchronize();
  if (uint64_t task = CurrentTaskId()) {
    int device = DeviceOfTask(task);
    if (device >= 0) api_.SetDevice(device);
    return api_.DeviceSynchronize();
  }
  // Outside a task: every GPU the process has work on.
  std::set<int> devices;
  {
    std::lock_guard lock(device_mu_);
    devices = prepared_devices_;
  }
  int previous = CurrentDevice();
  cudaError_t result = cudaSuccess;
  for (int device : devices) {
    api_.SetDevice(device);
    cudaError_t error = api_.DeviceSynchronize();
    if (result == cudaSuccess) result = error;
  }
  if (previous >= 0 && !devices.empty()) api_.SetDevice(previous);
  return result;
}

}  // namespace mgb::runtime
