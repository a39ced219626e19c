#include "fake_cuda.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "program_errors.h"

namespace mgb::test {

FakeCudaApi::~FakeCudaApi() {
  for (auto &[address, allocation] : allocations_) {
    if (!allocation.mapped) std::free(reinterpret_cast<void *>(address));
  }
  for (auto &[handle, physical] : physical_) close(physical.fd);
  for (auto &[base, reserved] : reservations_) munmap(reserved.first, reserved.second);
  for (auto &[handle, device] : streams_) std::free(handle);
  for (auto &[handle, device] : events_) std::free(handle);
  for (auto &[handle, graph] : graphs_) std::free(handle);
  for (auto &[handle, graph] : execs_) std::free(handle);
}

namespace {
std::atomic<uint64_t> next_fake_id{1};

// The current device of the calling thread for one fake (0 until set, like CUDA). Keyed by the
// fake's id, not its address: a fake made where an earlier one lived must not inherit its device.
int &CurrentSlot(uint64_t fake_id) {
  thread_local std::map<uint64_t, int> current;
  return current[fake_id];
}
}  // namespace

FakeCudaApi::FakeCudaApi(int devices) : id_(next_fake_id++), devices_(devices) {}

int FakeCudaApi::Current() { return CurrentSlot(id_); }

namespace {
// The calling thread's last error for one fake, as CUDA keeps one per host thread.
cudaError_t &LastErrorSlot(const FakeCudaApi *api) {
  thread_local std::map<const FakeCudaApi *, cudaError_t> last;
  return last[api];
}
}  // namespace

cudaError_t FakeCudaApi::Note(cudaError_t result) {
  // CUDA's rule: a failing call sets it, a successful one leaves it, and so does a query's
  // cudaErrorNotReady (CUDA 13 on an H100: no failure).
  if (runtime::SetsLastError(result)) {
    LastErrorSlot(this) = result;
    ++failures_;
  }
  return result;
}

cudaError_t FakeCudaApi::GetLastError() {
  cudaError_t last = LastErrorSlot(this);
  LastErrorSlot(this) = cudaSuccess;
  return last;
}
cudaError_t FakeCudaApi::PeekAtLastError() { return LastErrorSlot(this); }

void FakeCudaApi::Log(const char *name, const void *pointer, size_t bytes) {
  int device = Current();
  std::lock_guard lock(mu_);
  calls_.push_back(FakeCall{name, device, pointer, bytes});
}

void FakeCudaApi::RegisterKernel(const void *func, std::vector<size_t> param_sizes, Kernel body) {
  std::lock_guard lock(mu_);
  kernels_[func] = KernelInfo{std::move(param_sizes), std::move(body)};
}

void FakeCudaApi::RegisterSymbol(const void *symbol, size_t size) {
  std::lock_guard lock(mu_);
  symbol_sizes_[symbol] = size;
}

std::vector<FakeCall> FakeCudaApi::Calls() {
  std::lock_guard lock(mu_);
  return calls_;
}

std::vector<FakeCall> FakeCudaApi::CallsNamed(const std::string &name) {
  std::vector<FakeCall> named;
  for (const FakeCall &call : Calls()) {
    if (call.name == name) named.push_back(call);
  }
  return named;
}

void FakeCudaApi::ClearCalls() {
  std::lock_guard lock(mu_);
  calls_.clear();
}

int FakeCudaApi::DeviceOf(const void *device_pointer) {
  std::lock_guard lock(mu_);
  auto address = reinterpret_cast<uintptr_t>(device_pointer);
  auto it = allocations_.upper_bound(address);
  if (it == allocations_.begin()) return -1;
  --it;
  return address < it->first + it->second.size ? it->second.device : -1;
}

bool FakeCudaApi::Inside(const void *pointer, size_t count) {
  auto address = reinterpret_cast<uintptr_t>(pointer);
  auto it = allocations_.upper_bound(address);
  if (it == allocations_.begin()) return false;
  --it;
  return address + count <= it->first + it->second.size;
}

std::vector<unsigned char> FakeCudaApi::SymbolOn(const void *symbol, int device) {
  std::lock_guard lock(mu_);
  auto it = symbols_.find({symbol, device});
  return it == symbols_.end() ? std::vector<unsigned char>{} : it->second;
}

size_t FakeCudaApi::LiveAllocations() {
  std::lock_guard lock(mu_);
  return allocations_.size();
}

size_t FakeCudaApi::LimitOn(int device, cudaLimit limit) {
  std::lock_guard lock(mu_);
  auto it = limits_.find({device, limit});
  return it == limits_.end() ? 0 : it->second;
}

cudaError_t FakeCudaApi::GetDeviceCount(int *count) {
  ++device_count_queries_;
  *count = devices_;
  return cudaSuccess;
}
cudaError_t FakeCudaApi::GetDevice(int *device) {
  if (device == nullptr) return Note(cudaErrorInvalidValue);
  *device = Current();
  return cudaSuccess;
}
cudaError_t FakeCudaApi::SetDevice(int device) {
  if (device < 0 || device >= devices_) return Note(cudaErrorInvalidDevice);
  CurrentSlot(id_) = device;
  MakeContext();
  Log("SetDevice", nullptr, static_cast<size_t>(device));
  return cudaSuccess;
}
void FakeCudaApi::MakeContext() {
  const int device = Current();
  std::lock_guard lock(mu_);
  contexts_.insert(device);
}
std::set<int> FakeCudaApi::Contexts() {
  std::lock_guard lock(mu_);
  return contexts_;
}
bool FakeCudaApi::DeviceHasContext(int device) {
  std::lock_guard lock(mu_);
  return contexts_.count(device) > 0;
}
cudaError_t FakeCudaApi::DeviceGetByPCIBusId(int *device, const char *pci_bus_id) {
  ++bus_id_lookups_;
  int index = std::atoi(pci_bus_id) - first_bus_id_;  // the fake's bus ids are "0", "1", ...
  if (index < 0 || index >= devices_) return Note(cudaErrorInvalidDevice);
  *device = index;
  return cudaSuccess;
}
cudaError_t FakeCudaApi::DeviceGetPCIBusId(char *pci_bus_id, int length, int device) {
  ++bus_id_listings_;
  if (device < 0 || device >= devices_) return Note(cudaErrorInvalidDevice);
  std::snprintf(pci_bus_id, static_cast<size_t>(length), "%d", first_bus_id_ + device);
  return cudaSuccess;
}
cudaError_t FakeCudaApi::DeviceSynchronize() {
  Log("DeviceSynchronize");
  return Note(AllowedDuringCapture() ? cudaSuccess : cudaErrorStreamCaptureUnsupported);
}
// CUDA 12+'s rules on a compute capability 9.0 GPU (the fake's): the device runtime's sync depth
// is gone there, and a value outside the enumeration is no limit at all.
cudaError_t FakeCudaApi::DeviceSetLimit(cudaLimit limit, size_t value) {
  Log("DeviceSetLimit", nullptr, value);
  if (limit == cudaLimitDevRuntimeSyncDepth || limit > cudaLimitPersistingL2CacheSize) {
    return Note(cudaErrorUnsupportedLimit);
  }
  std::lock_guard lock(mu_);
  limits_[{Current(), limit}] = value;
  return cudaSuccess;
}
// CUDA's answers from the current device: every pair of the fake's devices can access the other.
cudaError_t FakeCudaApi::DeviceEnablePeerAccess(int peer, unsigned int flags) {
  const int device = Current();
  Log("DeviceEnablePeerAccess", nullptr, static_cast<size_t>(peer));
  if (peer < 0 || peer >= devices_ || peer == device) return Note(cudaErrorInvalidDevice);
  if (flags != 0) return Note(cudaErrorInvalidValue);
  std::lock_guard lock(mu_);
  if (!peers_.insert({device, peer}).second) return Note(cudaErrorPeerAccessAlreadyEnabled);
  return cudaSuccess;
}
cudaError_t FakeCudaApi::DeviceDisablePeerAccess(int peer) {
  const int device = Current();
  Log("DeviceDisablePeerAccess", nullptr, static_cast<size_t>(peer));
  if (peer < 0 || peer >= devices_ || peer == device) return Note(cudaErrorInvalidDevice);
  std::lock_guard lock(mu_);
  if (peers_.erase({device, peer}) == 0) return Note(cudaErrorPeerAccessNotEnabled);
  return cudaSuccess;
}
cudaError_t FakeCudaApi::DeviceGetAttribute(int *value, cudaDeviceAttr attr, int device) {
  if (value == nullptr) return Note(cudaErrorInvalidValue);
  if (device < 0 || device >= devices_) return Note(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrComputeCapabilityMajor: *value = 9; return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; return cudaSuccess;
    default: return Note(cudaErrorInvalidValue);
  }
}
cudaError_t FakeCudaApi::FuncGetAttributes(cudaFuncAttributes *attributes, const void *func) {
  ++func_attribute_queries_;
  MakeContext();
  std::lock_guard lock(mu_);
  if (!kernels_.count(func)) return Note(cudaErrorInvalidDeviceFunction);
  *attributes = cudaFuncAttributes{};
  attributes->numRegs = 32;
  return cudaSuccess;
}
cudaError_t FakeCudaApi::FuncGetParamInfo(const void *func, size_t index, size_t *offset,
                                          size_t *size) {
  std::lock_guard lock(mu_);
  auto it = kernels_.find(func);
  if (it == kernels_.end()) return Note(cudaErrorInvalidDeviceFunction);
  if (index >= it->second.param_sizes.size()) return Note(cudaErrorInvalidValue);
  *offset = 0;
  for (size_t i = 0; i < index; ++i) *offset += it->second.param_sizes[i];
  *size = it->second.param_sizes[index];
  return cudaSuccess;
}
cudaError_t FakeCudaApi::Malloc(void **ptr, size_t bytes) {
  if (!AllowedDuringCapture()) return Note(cudaErrorStreamCaptureUnsupported);
  MakeContext();
  void *memory = std::calloc(1, bytes == 0 ? 1 : bytes);
  {
    std::lock_guard lock(mu_);
    allocations_[reinterpret_cast<uintptr_t>(memory)] = Allocation{Current(), bytes};
  }
  *ptr = memory;
  Log("Malloc", memory, bytes);
  return cudaSuccess;
}
cudaError_t FakeCudaApi::MallocPitch(void **ptr, size_t *pitch, size_t width, size_t height) {
  *pitch = (width + 511) / 512 * 512;
  return Malloc(ptr, *pitch * height);
}
cudaError_t FakeCudaApi::MallocManaged(void **ptr, size_t bytes, unsigned int) {
  return Malloc(ptr, bytes);
}
cudaError_t FakeCudaApi::Free(void *ptr) {
  Log("Free", ptr);
  if (ptr == nullptr) return cudaSuccess;
  std::lock_guard lock(mu_);
  auto it = allocations_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == allocations_.end()) return Note(cudaErrorInvalidValue);
  allocations_.erase(it);
  std::free(ptr);
  return cudaSuccess;
}
cudaError_t FakeCudaApi::Memcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind) {
  Log(kind == cudaMemcpyHostToDevice     ? "MemcpyHtoD"
      : kind == cudaMemcpyDeviceToHost   ? "MemcpyDtoH"
      : kind == cudaMemcpyDeviceToDevice ? "MemcpyDtoD"
                                         : "Memcpy",
      dst, count);
  if (!AllowedDuringCapture()) return Note(cudaErrorStreamCaptureUnsupported);
  {
    std::lock_guard lock(mu_);
    bool dst_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    bool src_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if ((dst_device && !Inside(dst, count)) || (src_device && !Inside(src, count))) {
      return Note(cudaErrorInvalidValue);
    }
  }
  std::memmove(dst, src, count);
  return cudaSuccess;
}
cudaError_t FakeCudaApi::MemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind,
                                     cudaStream_t stream) {
  Log("MemcpyAsync", dst, count);
  if (stream != nullptr) {
    std::lock_guard lock(mu_);
    auto it = streams_.find(stream);
    if (it == streams_.end() || it->second != Current())
      return Note(cudaErrorInvalidResourceHandle);
  }
  std::memmove(dst, src, count);
  (void)kind;
  return cudaSuccess;
}
cudaError_t FakeCudaApi::Memcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                                  size_t width, size_t height, cudaMemcpyKind) {
  Log("Memcpy2D", dst, width * height);
  for (size_t row = 0; row < height; ++row) {
    std::memmove(static_cast<char *>(dst) + row * dpitch,
                 static_cast<const char *>(src) + row * spitch, width);
  }
  return cudaSuccess;
}
// CUDA's peer copy checks the device numbers and that each pointer is memory of its device.
cudaError_t FakeCudaApi::MemcpyPeer(void *dst, int dst_device, const void *src, int src_device,
                                    size_t count) {
  Log("MemcpyPeer", dst, count);
  if (dst_device < 0 || dst_device >= devices_ || src_device < 0 || src_device >= devices_) {
    return Note(cudaErrorInvalidDevice);
  }
  {
    std::lock_guard lock(mu_);
    auto on = [&](const void *p, int device) {
      auto it = allocations_.find(reinterpret_cast<uintptr_t>(p));
      return it == allocations_.end() || it->second.device == device;  // not ours: not checked
    };
    if (!on(dst, dst_device) || !on(src, src_device)) return Note(cudaErrorInvalidValue);
  }
  std::memmove(dst, src, count);
  return cudaSuccess;
}
cudaError_t FakeCudaApi::MemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
                                         size_t count, cudaStream_t) {
  return MemcpyPeer(dst, dst_device, src, src_device, count);
}
cudaError_t FakeCudaApi::Memset(void *ptr, int value, size_t count) {
  Log("Memset", ptr, count);
  if (!AllowedDuringCapture()) return Note(cudaErrorStreamCaptureUnsupported);
  {
    std::lock_guard lock(mu_);
    if (!Inside(ptr, count)) return Note(cudaErrorInvalidValue);
  }
  std::memset(ptr, value, count);
  return cudaSuccess;
}
cudaError_t FakeCudaApi::MemsetAsync(void *ptr, int value, size_t count, cudaStream_t) {
  Log("MemsetAsync", ptr, count);
  std::memset(ptr, value, count);
  return cudaSuccess;
}
// The current device's copy of `symbol`, after checking [offset, offset + count) as CUDA does.
cudaError_t FakeCudaApi::SymbolBytesLocked(const void *symbol, size_t count, size_t offset,
                                           std::vector<unsigned char> **bytes) {
  auto size = symbol_sizes_.find(symbol);
  if (size == symbol_sizes_.end()) return cudaErrorInvalidSymbol;
  if (offset + count > size->second) return cudaErrorInvalidValue;
  *bytes = &symbols_[{symbol, Current()}];
  (*bytes)->resize(size->second);
  return cudaSuccess;
}
cudaError_t FakeCudaApi::MemcpyToSymbol(const void *symbol, const void *src, size_t count,
                                        size_t offset, cudaMemcpyKind) {
  Log("MemcpyToSymbol", symbol, count);
  std::lock_guard lock(mu_);
  std::vector<unsigned char> *bytes = nullptr;
  cudaError_t error = SymbolBytesLocked(symbol, count, offset, &bytes);
  if (error == cudaSuccess) std::memcpy(bytes->data() + offset, src, count);
  return Note(error);
}
cudaError_t FakeCudaApi::MemcpyFromSymbol(void *dst, const void *symbol, size_t count,
                                          size_t offset, cudaMemcpyKind) {
  Log("MemcpyFromSymbol", symbol, count);
  std::lock_guard lock(mu_);
  std::vector<unsigned char> *bytes = nullptr;
  cudaError_t error = SymbolBytesLocked(symbol, count, offset, &bytes);
  if (error == cudaSuccess) std::memcpy(dst, bytes->data() + offset, count);
  return Note(error);
}
void *FakeCudaApi::NewHandle(std::map<void *, int> &table) {
  void *handle = std::malloc(1);
  std::lock_guard lock(mu_);
  table[handle] = Current();
  return handle;
}
cudaError_t FakeCudaApi::StreamCreateWithFlags(cudaStream_t *stream, unsigned int) {
  *stream = static_cast<cudaStream_t>(NewHandle(streams_));
  Log("StreamCreate", *stream);
  return cudaSuccess;
}
cudaError_t FakeCudaApi::StreamDestroy(cudaStream_t stream) {
  Log("StreamDestroy", stream);
  std::lock_guard lock(mu_);
  if (streams_.erase(stream) == 0) return Note(cudaErrorInvalidResourceHandle);
  std::free(stream);
  return cudaSuccess;
}
cudaError_t FakeCudaApi::StreamSynchronize(cudaStream_t stream) {
  Log("StreamSynchronize", stream);
  std::lock_guard lock(mu_);
  return Note(stream == nullptr || streams_.count(stream) ? cudaSuccess
                                                          : cudaErrorInvalidResourceHandle);
}
cudaError_t FakeCudaApi::StreamQuery(cudaStream_t stream) {
  cudaError_t error = StreamSynchronize(stream);
  return Note(error == cudaSuccess && busy_ ? cudaErrorNotReady : error);
}
cudaError_t FakeCudaApi::StreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int) {
  Log("StreamWaitEvent", stream);
  std::lock_guard lock(mu_);
  return Note((stream == nullptr || streams_.count(stream)) && events_.count(event)
                  ? cudaSuccess
                  : cudaErrorInvalidResourceHandle);
}
cudaError_t FakeCudaApi::EventCreateWithFlags(cudaEvent_t *event, unsigned int) {
  *event = static_cast<cudaEvent_t>(NewHandle(events_));
  Log("EventCreate", *event);
  return cudaSuccess;
}
cudaError_t FakeCudaApi::EventRecord(cudaEvent_t event, cudaStream_t stream) {
  Log("EventRecord", event);
  std::lock_guard lock(mu_);
  auto it = events_.find(event);
  if (it == events_.end()) return Note(cudaErrorInvalidResourceHandle);
  if (stream != nullptr && (!streams_.count(stream) || streams_[stream] != it->second)) {
    return Note(cudaErrorInvalidResourceHandle);  // CUDA: event and stream of different devices
  }
  return cudaSuccess;
}
cudaError_t FakeCudaApi::EventSynchronize(cudaEvent_t event) {
  Log("EventSynchronize", event);
  std::lock_guard lock(mu_);
  return Note(events_.count(event) ? cudaSuccess : cudaErrorInvalidResourceHandle);
}
cudaError_t FakeCudaApi::EventQuery(cudaEvent_t event) {
  cudaError_t error = EventSynchronize(event);
  return Note(error == cudaSuccess && busy_ ? cudaErrorNotReady : error);
}
cudaError_t FakeCudaApi::EventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  Log("EventElapsedTime", start);
  std::lock_guard lock(mu_);
  if (!events_.count(start) || !events_.count(end)) return Note(cudaErrorInvalidResourceHandle);
  if (events_[start] != events_[end]) return Note(cudaErrorInvalidResourceHandle);  // as CUDA does
  *ms = 1.5f;
  return cudaSuccess;
}
cudaError_t FakeCudaApi::EventDestroy(cudaEvent_t event) {
  Log("EventDestroy", event);
  std::lock_guard lock(mu_);
  if (events_.erase(event) == 0) return Note(cudaErrorInvalidResourceHandle);
  std::free(event);
  return cudaSuccess;
}
cudaError_t FakeCudaApi::LaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t,
                                      cudaStream_t stream) {
  Log("LaunchKernel", func);
  Kernel body;
  {
    std::lock_guard lock(mu_);
    auto it = kernels_.find(func);
    if (it == kernels_.end()) return Note(cudaErrorInvalidDeviceFunction);
    if (stream != nullptr && (!streams_.count(stream) || streams_[stream] != Current())) {
      return Note(cudaErrorInvalidResourceHandle);
    }
    body = it->second.body;
    if (auto capture = capturing_.find(stream); capture != capturing_.end()) {
      RecordedLaunch recorded{func, grid, block, {}};
      for (size_t i = 0; i < it->second.param_sizes.size(); ++i) {
        const auto *bytes = static_cast<const unsigned char *>(args[i]);
        recorded.args.emplace_back(bytes, bytes + it->second.param_sizes[i]);
      }
      capture->second.launches.push_back(std::move(recorded));
      return cudaSuccess;
    }
  }
  FakeLaunch launch{Current(), args, grid, block, stream};
  body(launch);
  return cudaSuccess;
}

cudaError_t FakeCudaApi::LaunchCooperativeKernel(const void *func, dim3 grid, dim3 block,
                                                 void **args, size_t shared_bytes,
                                                 cudaStream_t stream) {
  Log("LaunchCooperativeKernel", func);
  return LaunchKernel(func, grid, block, args, shared_bytes, stream);
}

cudaError_t FakeCudaApi::LaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                                         void **args) {
  Log("LaunchKernelExC", func);
  if (config == nullptr) return Note(cudaErrorInvalidValue);
  {
    std::lock_guard lock(mu_);
    last_attributes_.assign(config->attrs, config->attrs + config->numAttrs);
  }
  return LaunchKernel(func, config->gridDim, config->blockDim, args, config->dynamicSmemBytes,
                      config->stream);
}

bool FakeCudaApi::AllowedDuringCapture() {
  std::lock_guard lock(mu_);
  if (capturing_.empty()) return true;
  capture_invalidated_ = true;
  return false;
}

cudaError_t FakeCudaApi::StreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode) {
  Log("StreamBeginCapture", stream);
  std::lock_guard lock(mu_);
  auto it = streams_.find(stream);
  if (it == streams_.end() || it->second != Current()) return Note(cudaErrorInvalidResourceHandle);
  if (capturing_.count(stream)) return Note(cudaErrorIllegalState);
  capturing_[stream] = FakeGraph{Current(), {}};
  return cudaSuccess;
}

cudaError_t FakeCudaApi::StreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) {
  Log("StreamEndCapture", stream);
  std::lock_guard lock(mu_);
  auto it = capturing_.find(stream);
  if (it == capturing_.end()) return Note(cudaErrorIllegalState);
  auto made = std::make_unique<FakeGraph>(std::move(it->second));
  capturing_.erase(it);
  if (capture_invalidated_) {
    capture_invalidated_ = !capturing_.empty();
    *graph = nullptr;
    return Note(cudaErrorStreamCaptureInvalidated);
  }
  void *handle = std::malloc(1);
  graphs_[handle] = std::move(made);
  *graph = static_cast<cudaGraph_t>(handle);
  return cudaSuccess;
}

cudaError_t FakeCudaApi::GraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                          unsigned long long) {
  Log("GraphInstantiate", graph);
  std::lock_guard lock(mu_);
  auto it = graphs_.find(graph);
  if (it == graphs_.end()) return Note(cudaErrorInvalidValue);
  void *handle = std::malloc(1);
  execs_[handle] = it->second.get();
  *exec = static_cast<cudaGraphExec_t>(handle);
  return cudaSuccess;
}

cudaError_t FakeCudaApi::GraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  Log("GraphLaunch", exec);
  std::vector<std::pair<Kernel, RecordedLaunch>> runs;
  int device;
  {
    std::lock_guard lock(mu_);
    auto it = execs_.find(exec);
    if (it == execs_.end()) return Note(cudaErrorInvalidValue);
    device = it->second->device;
    if (stream != nullptr && (!streams_.count(stream) || streams_[stream] != device)) {
      return Note(cudaErrorInvalidResourceHandle);
    }
    for (const RecordedLaunch &launch : it->second->launches) {
      runs.emplace_back(kernels_[launch.func].body, launch);
    }
  }
  for (auto &[body, launch] : runs) {
    std::vector<void *> args;
    for (auto &bytes : launch.args) args.push_back(bytes.data());
    FakeLaunch run{device, args.data(), launch.grid, launch.block, stream};
    body(run);
  }
  return cudaSuccess;
}

cudaError_t FakeCudaApi::AddressGranularity(size_t *bytes) {
  if (granularity_ == 0) return cudaErrorNotSupported;
  *bytes = granularity_;
  return cudaSuccess;
}

cudaError_t FakeCudaApi::ReserveAddresses(size_t bytes, size_t alignment, uintptr_t *address) {
  if (granularity_ == 0) return cudaErrorNotSupported;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  alignment = std::max(alignment, page);
  size_t length = bytes + alignment;
  void *p = mmap(nullptr, length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return cudaErrorMemoryAllocation;
  uintptr_t base = (reinterpret_cast<uintptr_t>(p) + alignment - 1) / alignment * alignment;
  std::lock_guard lock(mu_);
  reservations_[base] = {p, length};
  *address = base;
  return cudaSuccess;
}

cudaError_t FakeCudaApi::FreeAddresses(uintptr_t address, size_t) {
  std::lock_guard lock(mu_);
  auto it = reservations_.find(address);
  if (it == reservations_.end()) return cudaErrorInvalidValue;
  munmap(it->second.first, it->second.second);
  reservations_.erase(it);
  return cudaSuccess;
}

cudaError_t FakeCudaApi::CreatePhysical(size_t bytes, int device, uint64_t *handle) {
  if (device < 0 || device >= devices_) return cudaErrorInvalidDevice;
  if (granularity_ == 0 || bytes % granularity_ != 0) return cudaErrorInvalidValue;
  int fd = memfd_create("fake-gpu-memory", 0);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    if (fd >= 0) close(fd);
    return cudaErrorMemoryAllocation;
  }
  std::lock_guard lock(mu_);
  *handle = next_physical_++;
  physical_[*handle] = Physical{fd, device, bytes};
  return cudaSuccess;
}

cudaError_t FakeCudaApi::ReleasePhysical(uint64_t handle) {
  std::lock_guard lock(mu_);
  auto it = physical_.find(handle);
  if (it == physical_.end()) return cudaErrorInvalidValue;
  close(it->second.fd);  // the mappings keep the memory until they go, as the driver does
  physical_.erase(it);
  return cudaSuccess;
}

cudaError_t FakeCudaApi::MapPhysical(uintptr_t address, size_t bytes, uint64_t handle, int device) {
  Log("MapPhysical", reinterpret_cast<void *>(address), bytes);
  std::lock_guard lock(mu_);
  auto it = physical_.find(handle);
  if (it == physical_.end() || it->second.size != bytes || it->second.device != device) {
    return cudaErrorInvalidValue;
  }
  void *p = mmap(reinterpret_cast<void *>(address), bytes, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_FIXED, it->second.fd, 0);
  if (p == MAP_FAILED) return cudaErrorInvalidValue;
  allocations_[address] = Allocation{device, bytes, true};
  return cudaSuccess;
}

cudaError_t FakeCudaApi::UnmapPhysical(uintptr_t address, size_t bytes) {
  Log("UnmapPhysical", reinterpret_cast<void *>(address), bytes);
  std::lock_guard lock(mu_);
  auto it = allocations_.find(address);
  if (it == allocations_.end() || !it->second.mapped || it->second.size != bytes) {
    return cudaErrorInvalidValue;
  }
  allocations_.erase(it);
  // Back to a reservation: addresses kept, no memory, any touch faults.
  mmap(reinterpret_cast<void *>(address), bytes, PROT_NONE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  return cudaSuccess;
}

size_t FakeCudaApi::PhysicalBytesOn(int device) {
  std::lock_guard lock(mu_);
  size_t total = 0;
  for (const auto &[handle, physical] : physical_) {
    if (physical.device == device) total += physical.size;
  }
  return total;
}

}  // namespace mgb::test
