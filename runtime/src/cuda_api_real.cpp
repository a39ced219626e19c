// The real CudaApi: plain calls into the CUDA runtime. Compiled by the host compiler with the CUDA
// headers only; the symbols resolve against the program's own cudart at its final link, so libmgb
// and the program share one CUDA runtime (one current device per thread).
#include "cuda_api.h"
#include "driver_entry.h"
#include "driver_vmm.h"

#include <cuda.h>  // types and prototypes only: driver calls go through entry points
#include <cuda_runtime_api.h>

namespace mgb::runtime {
namespace {

class RealCudaApi final : public CudaApi {
 public:
  cudaError_t GetLastError() override { return cudaGetLastError(); }
  cudaError_t PeekAtLastError() override { return cudaPeekAtLastError(); }
  cudaError_t GetDeviceCount(int *count) override { return cudaGetDeviceCount(count); }
  cudaError_t GetDevice(int *device) override { return cudaGetDevice(device); }
  cudaError_t SetDevice(int device) override { return cudaSetDevice(device); }
  cudaError_t DeviceGetPCIBusId(char *pci_bus_id, int length, int device) override {
    return cudaDeviceGetPCIBusId(pci_bus_id, length, device);
  }
  cudaError_t DeviceGetByPCIBusId(int *device, const char *pci_bus_id) override {
    return cudaDeviceGetByPCIBusId(device, pci_bus_id);
  }
  cudaError_t DeviceSynchronize() override { return cudaDeviceSynchronize(); }
  cudaError_t DeviceSetLimit(cudaLimit limit, size_t value) override {
    return cudaDeviceSetLimit(limit, value);
  }
  cudaError_t DeviceGetAttribute(int *value, cudaDeviceAttr attr, int device) override {
    return cudaDeviceGetAttribute(value, attr, device);
  }
  cudaError_t DeviceEnablePeerAccess(int peer, unsigned int flags) override {
    return cudaDeviceEnablePeerAccess(peer, flags);
  }
  cudaError_t DeviceDisablePeerAccess(int peer) override {
    return cudaDeviceDisablePeerAccess(peer);
  }
  bool DeviceHasContext(int device) override {
    static const auto get = [] {
      decltype(&cuDeviceGet) fn = nullptr;
      return LoadDriverEntry("cuDeviceGet", &fn) ? fn : nullptr;
    }();
    static const auto state = [] {
      decltype(&cuDevicePrimaryCtxGetState) fn = nullptr;
      return LoadDriverEntry("cuDevicePrimaryCtxGetState", &fn) ? fn : nullptr;
    }();
    CUdevice handle = 0;
    unsigned int flags = 0;
    int active = 0;
    // A driver without them: say yes, as before this question was asked.
    if (get == nullptr || state == nullptr) return true;
    if (get(&handle, device) != CUDA_SUCCESS) return true;
    return state(handle, &flags, &active) != CUDA_SUCCESS || active != 0;
  }
  cudaError_t FuncGetAttributes(cudaFuncAttributes *attributes, const void *func) override {
    return cudaFuncGetAttributes(attributes, func);
  }
  cudaError_t FuncGetParamInfo(const void *func, size_t index, size_t *offset,
                               size_t *size) override {
    return cudaFuncGetParamInfo(func, index, offset, size);
  }
  cudaError_t Malloc(void **ptr, size_t bytes) override { return cudaMalloc(ptr, bytes); }
  cudaError_t MallocPitch(void **ptr, size_t *pitch, size_t width, size_t height) override {
    return cudaMallocPitch(ptr, pitch, width, height);
  }
  cudaError_t MallocManaged(void **ptr, size_t bytes, unsigned int flags) override {
    return cudaMallocManaged(ptr, bytes, flags);
  }
  cudaError_t Free(void *ptr) override { return cudaFree(ptr); }
  cudaError_t Memcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind) override {
    return cudaMemcpy(dst, src, count, kind);
  }
  cudaError_t MemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind,
                          cudaStream_t stream) override {
    return cudaMemcpyAsync(dst, src, count, kind, stream);
  }
  cudaError_t Memcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                       size_t height, cudaMemcpyKind kind) override {
    return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
  }
  cudaError_t MemcpyPeer(void *dst, int dst_device, const void *src, int src_device,
                         size_t count) override {
    return cudaMemcpyPeer(dst, dst_device, src, src_device, count);
  }
  cudaError_t MemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
                              size_t count, cudaStream_t stream) override {
    return cudaMemcpyPeerAsync(dst, dst_device, src, src_device, count, stream);
  }
  cudaError_t Memset(void *ptr, int value, size_t count) override {
    return cudaMemset(ptr, value, count);
  }
  cudaError_t MemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream) override {
    return cudaMemsetAsync(ptr, value, count, stream);
  }
  cudaError_t MemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                             cudaMemcpyKind kind) override {
    return cudaMemcpyToSymbol(symbol, src, count, offset, kind);
  }
  cudaError_t MemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                               cudaMemcpyKind kind) override {
    return cudaMemcpyFromSymbol(dst, symbol, count, offset, kind);
  }
  cudaError_t StreamCreateWithFlags(cudaStream_t *stream, unsigned int flags) override {
    return cudaStreamCreateWithFlags(stream, flags);
  }
  cudaError_t StreamDestroy(cudaStream_t stream) override { return cudaStreamDestroy(stream); }
  cudaError_t StreamSynchronize(cudaStream_t stream) override {
    return cudaStreamSynchronize(stream);
  }
  cudaError_t StreamQuery(cudaStream_t stream) override { return cudaStreamQuery(stream); }
  cudaError_t StreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) override {
    return cudaStreamWaitEvent(stream, event, flags);
  }
  cudaError_t EventCreateWithFlags(cudaEvent_t *event, unsigned int flags) override {
    return cudaEventCreateWithFlags(event, flags);
  }
  cudaError_t EventRecord(cudaEvent_t event, cudaStream_t stream) override {
    return cudaEventRecord(event, stream);
  }
  cudaError_t EventSynchronize(cudaEvent_t event) override { return cudaEventSynchronize(event); }
  cudaError_t EventQuery(cudaEvent_t event) override { return cudaEventQuery(event); }
  cudaError_t EventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) override {
    return cudaEventElapsedTime(ms, start, end);
  }
  cudaError_t EventDestroy(cudaEvent_t event) override { return cudaEventDestroy(event); }
  cudaError_t LaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                           size_t shared_bytes, cudaStream_t stream) override {
    return cudaLaunchKernel(func, grid, block, args, shared_bytes, stream);
  }
  cudaError_t LaunchCooperativeKernel(const void *func, dim3 grid, dim3 block, void **args,
                                      size_t shared_bytes, cudaStream_t stream) override {
    return cudaLaunchCooperativeKernel(func, grid, block, args, shared_bytes, stream);
  }
  cudaError_t LaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                              void **args) override {
    return cudaLaunchKernelExC(config, func, args);
  }
  cudaError_t StreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) override {
    return cudaStreamBeginCapture(stream, mode);
  }
  cudaError_t StreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) override {
    return cudaStreamEndCapture(stream, graph);
  }
  cudaError_t GraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                               unsigned long long flags) override {
    return cudaGraphInstantiate(exec, graph, flags);
  }
  cudaError_t GraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) override {
    return cudaGraphLaunch(exec, stream);
  }
  cudaError_t AddressGranularity(size_t *bytes) override {
    return DriverVmm::Get().Granularity(bytes);
  }
  cudaError_t ReserveAddresses(size_t bytes, size_t alignment, uintptr_t *address) override {
    return DriverVmm::Get().Reserve(bytes, alignment, address);
  }
  cudaError_t FreeAddresses(uintptr_t address, size_t bytes) override {
    return DriverVmm::Get().Free(address, bytes);
  }
  cudaError_t CreatePhysical(size_t bytes, int device, uint64_t *handle) override {
    return DriverVmm::Get().Create(bytes, device, handle);
  }
  cudaError_t ReleasePhysical(uint64_t handle) override { return DriverVmm::Get().Release(handle); }
  cudaError_t MapPhysical(uintptr_t address, size_t bytes, uint64_t handle, int device) override {
    return DriverVmm::Get().Map(address, bytes, handle, device);
  }
  cudaError_t UnmapPhysical(uintptr_t address, size_t bytes) override {
    return DriverVmm::Get().Unmap(address, bytes);
  }
};

}  // namespace

CudaApi &DefaultCudaApi() {
  static RealCudaApi *api = new RealCudaApi();  // never destroyed: used from atexit handlers
  return *api;
}

}  // namespace mgb::runtime
