// FakeCudaApi: N simulated GPUs in host memory behind libmgb's CudaApi seam. Every call is logged
// with the device current on the calling thread, so tests can check ordering, replay, translation
// and which GPU each operation ran on. Kernels are host functions registered by the test.
#ifndef MGB_TEST_RUNTIME_FAKE_CUDA_H
#define MGB_TEST_RUNTIME_FAKE_CUDA_H

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cuda_api.h"

namespace mgb::test {

struct FakeCall {
  std::string name;
  int device = -1;                // current device of the calling thread
  const void *pointer = nullptr;  // the main pointer argument (destination, freed pointer, ...)
  size_t bytes = 0;
};

struct FakeLaunch {
  int device;
  void **args;
  dim3 grid, block;
  cudaStream_t stream;
};

class FakeCudaApi final : public runtime::CudaApi {
 public:
  explicit FakeCudaApi(int devices = 2);
  ~FakeCudaApi() override;

  // ---- test controls
  using Kernel = std::function<void(FakeLaunch &)>;
  void RegisterKernel(const void *func, std::vector<size_t> param_sizes, Kernel body);
  void RegisterSymbol(const void *symbol, size_t size);
  std::vector<FakeCall> Calls();
  std::vector<FakeCall> CallsNamed(const std::string &name);
  void ClearCalls();
  // How often the runtime asked for the device count, a device by PCI bus id and a kernel's
  // attributes (not in
  // Calls(): tests there list the calls that touch a GPU).
  int DeviceCountQueries() const { return device_count_queries_; }
  int BusIdLookups() const { return bus_id_lookups_; }    // cudaDeviceGetByPCIBusId calls
  int BusIdListings() const { return bus_id_listings_; }  // cudaDeviceGetPCIBusId calls
  // As under CUDA_VISIBLE_DEVICES=first,first+1,...: device i is the GPU on bus id first + i
  // (the fake's bus ids are "0", "1", ... as in the test mgbd's config).
  void SetFirstBusId(int first) { first_bus_id_ = first; }
  int FuncAttributeQueries() const { return func_attribute_queries_; }
  // Devices with a context, made as CUDA 12 makes one: by cudaSetDevice, an allocation or a
  // kernel's attributes on the current device.
  std::set<int> Contexts();
  int DeviceOf(const void *device_pointer);  // -1 if not a live fake allocation
  // Bytes of `symbol` as held on `device`.
  std::vector<unsigned char> SymbolOn(const void *symbol, int device);
  size_t LiveAllocations();
  size_t LimitOn(int device, cudaLimit limit);
  // Busy: streams and events have work in flight, so their queries answer cudaErrorNotReady.
  void SetBusy(bool busy) { busy_ = busy; }
  // How many calls failed so far (each set its thread's last error; cudaErrorNotReady is none).
  int Failures() const { return failures_; }

  // ---- CudaApi
  // CUDA's per-thread rule: every failing call sets the calling thread's last error to its code
  // (Note), a successful one or a cudaErrorNotReady leaves it; Get returns and resets it, Peek
  // returns it.
  cudaError_t GetLastError() override;
  cudaError_t PeekAtLastError() override;
  cudaError_t GetDeviceCount(int *count) override;
  cudaError_t GetDevice(int *device) override;
  cudaError_t SetDevice(int device) override;
  cudaError_t DeviceGetByPCIBusId(int *device, const char *pci_bus_id) override;
  cudaError_t DeviceGetPCIBusId(char *pci_bus_id, int length, int device) override;
  cudaError_t DeviceSynchronize() override;
  cudaError_t DeviceSetLimit(cudaLimit limit, size_t value) override;
  cudaError_t DeviceGetAttribute(int *value, cudaDeviceAttr attr, int device) override;
  cudaError_t DeviceEnablePeerAccess(int peer, unsigned int flags) override;
  cudaError_t DeviceDisablePeerAccess(int peer) override;
  bool DeviceHasContext(int device) override;
  cudaError_t FuncGetAttributes(cudaFuncAttributes *attributes, const void *func) override;
  cudaError_t FuncGetParamInfo(const void *func, size_t index, size_t *offset,
                               size_t *size) override;
  cudaError_t Malloc(void **ptr, size_t bytes) override;
  cudaError_t MallocPitch(void **ptr, size_t *pitch, size_t width, size_t height) override;
  cudaError_t MallocManaged(void **ptr, size_t bytes, unsigned int flags) override;
  cudaError_t Free(void *ptr) override;
  cudaError_t Memcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind) override;
  cudaError_t MemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind,
                          cudaStream_t stream) override;
  cudaError_t Memcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                       size_t height, cudaMemcpyKind kind) override;
  cudaError_t MemcpyPeer(void *dst, int dst_device, const void *src, int src_device,
                         size_t count) override;
  cudaError_t MemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
                              size_t count, cudaStream_t stream) override;
  cudaError_t Memset(void *ptr, int value, size_t count) override;
  cudaError_t MemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream) override;
  cudaError_t MemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                             cudaMemcpyKind kind) override;
  cudaError_t MemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                               cudaMemcpyKind kind) override;
  cudaError_t StreamCreateWithFlags(cudaStream_t *stream, unsigned int flags) override;
  cudaError_t StreamDestroy(cudaStream_t stream) override;
  cudaError_t StreamSynchronize(cudaStream_t stream) override;
  cudaError_t StreamQuery(cudaStream_t stream) override;
  cudaError_t StreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) override;
  cudaError_t EventCreateWithFlags(cudaEvent_t *event, unsigned int flags) override;
  cudaError_t EventRecord(cudaEvent_t event, cudaStream_t stream) override;
  cudaError_t EventSynchronize(cudaEvent_t event) override;
  cudaError_t EventQuery(cudaEvent_t event) override;
  cudaError_t EventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) override;
  cudaError_t EventDestroy(cudaEvent_t event) override;
  cudaError_t LaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                           size_t shared_bytes, cudaStream_t stream) override;
  // Logged as LaunchCooperativeKernel, then run as LaunchKernel.
  cudaError_t LaunchCooperativeKernel(const void *func, dim3 grid, dim3 block, void **args,
                                      size_t shared_bytes, cudaStream_t stream) override;
  // Logged as LaunchKernelExC (attributes in LastLaunchAttributes()), then run as LaunchKernel.
  cudaError_t LaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                              void **args) override;
  std::vector<cudaLaunchAttribute> LastLaunchAttributes() {
    std::lock_guard lock(mu_);
    return last_attributes_;
  }
  // Graphs as CUDA makes them in global capture mode: launches on a capturing stream are
  // recorded, not run; an allocation, synchronous copy or set, or a device synchronisation
  // while any capture is under way fails (cudaErrorStreamCaptureUnsupported) and invalidates
  // the capture. A graph runs its launches on the device it was captured on.
  cudaError_t StreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) override;
  cudaError_t StreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) override;
  cudaError_t GraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                               unsigned long long flags) override;
  cudaError_t GraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) override;
  // Virtual memory management as the driver does it: addresses reserved with mmap(PROT_NONE),
  // physical memory a memfd, mapped at those addresses (MAP_SHARED | MAP_FIXED), so data survives
  // a remap exactly as on a GPU. Reserving and freeing addresses is not logged (no GPU is
  // touched); mapping and unmapping are ("MapPhysical", "UnmapPhysical").
  cudaError_t AddressGranularity(size_t *bytes) override;
  cudaError_t ReserveAddresses(size_t bytes, size_t alignment, uintptr_t *address) override;
  cudaError_t FreeAddresses(uintptr_t address, size_t bytes) override;
  cudaError_t CreatePhysical(size_t bytes, int device, uint64_t *handle) override;
  cudaError_t ReleasePhysical(uint64_t handle) override;
  cudaError_t MapPhysical(uintptr_t address, size_t bytes, uint64_t handle, int device) override;
  cudaError_t UnmapPhysical(uintptr_t address, size_t bytes) override;

  // ---- test controls for virtual memory management
  // The mapping granularity (a host page, 4 KiB, by default: the fake maps host pages; a GPU's is
  // 2 MiB); 0: the driver has no virtual memory management (cudaErrorNotSupported).
  void SetGranularity(size_t bytes) { granularity_ = bytes; }
  // Physical memory made and not yet released, in bytes, on `device`.
  size_t PhysicalBytesOn(int device);

 private:
  struct RecordedLaunch {
    const void *func;
    dim3 grid, block;
    std::vector<std::vector<unsigned char>> args;  // each parameter's bytes at capture
  };
  struct FakeGraph {
    int device;
    std::vector<RecordedLaunch> launches;
  };
  // While a capture is under way, what CUDA refuses in global mode: false, and the capture is
  // invalidated.
  bool AllowedDuringCapture();
  std::map<void *, FakeGraph> capturing_;  // capturing stream -> what it recorded so far
  bool capture_invalidated_ = false;
  std::map<void *, std::unique_ptr<FakeGraph>> graphs_;  // graph handle -> graph
  std::map<void *, FakeGraph *> execs_;                  // exec handle -> graph

  struct Allocation {
    int device;
    size_t size;
    bool mapped = false;  // a MapPhysical mapping (not malloc'ed)
  };
  struct Physical {
    int fd;
    int device;
    size_t size;
  };
  size_t granularity_ = 4096;
  uint64_t next_physical_ = 1;
  std::map<uint64_t, Physical> physical_;
  std::map<uintptr_t, std::pair<void *, size_t>> reservations_;  // aligned base -> mmap's
  struct KernelInfo {
    std::vector<size_t> param_sizes;
    Kernel body;
  };
  int Current();
  // A call's result; a failure becomes the calling thread's last error.
  cudaError_t Note(cudaError_t result);
  void Log(const char *name, const void *pointer = nullptr, size_t bytes = 0);
  // A handle (stream/event) owned by the current device.
  void *NewHandle(std::map<void *, int> &table);
  bool Inside(const void *pointer, size_t count);  // a live allocation covers [pointer, +count)

  const uint64_t id_;  // keys each thread's current device of this fake
  int devices_;
  std::mutex mu_;
  std::vector<FakeCall> calls_;
  std::atomic<int> device_count_queries_{0};
  std::atomic<int> bus_id_lookups_{0};
  std::atomic<int> bus_id_listings_{0};
  int first_bus_id_ = 0;
  std::atomic<int> func_attribute_queries_{0};
  std::set<int> contexts_;  // under mu_
  void MakeContext();
  std::atomic<bool> busy_{false};
  std::atomic<int> failures_{0};
  std::map<uintptr_t, Allocation> allocations_;
  std::map<void *, int> streams_, events_;
  std::map<const void *, KernelInfo> kernels_;
  std::map<const void *, size_t> symbol_sizes_;
  cudaError_t SymbolBytesLocked(const void *symbol, size_t count, size_t offset,
                                std::vector<unsigned char> **bytes);
  std::map<std::pair<const void *, int>, std::vector<unsigned char>> symbols_;
  std::map<std::pair<int, cudaLimit>, size_t> limits_;
  std::set<std::pair<int, int>> peers_;  // (device, peer) with peer access enabled
  std::vector<cudaLaunchAttribute> last_attributes_;
};

}  // namespace mgb::test

#endif  // MGB_TEST_RUNTIME_FAKE_CUDA_H
