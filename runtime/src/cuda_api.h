// CudaApi: the seam between libmgb's logic and the CUDA runtime. Every CUDA call libmgb makes goes
// through it, so the logic (mgb_runtime_core) builds and is tested without cudart: tests drive it
// with a fake that simulates devices in host memory; libmgb.a adds the implementation that calls
// the program's own (statically linked) cudart.
#ifndef MGB_RUNTIME_SRC_CUDA_API_H
#define MGB_RUNTIME_SRC_CUDA_API_H

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace mgb::runtime {

class CudaApi {
 public:
  virtual ~CudaApi() = default;

  // The calling thread's last error: Get returns and resets it, Peek only returns it. Every
  // failing call above sets it, so libmgb's own calls change what the program would read: the
  // C API keeps the program's error apart (program_errors.h).
  virtual cudaError_t GetLastError() = 0;
  virtual cudaError_t PeekAtLastError() = 0;

  virtual cudaError_t GetDeviceCount(int *count) = 0;
  virtual cudaError_t GetDevice(int *device) = 0;
  virtual cudaError_t SetDevice(int device) = 0;
  virtual cudaError_t DeviceGetByPCIBusId(int *device, const char *pci_bus_id) = 0;
  virtual cudaError_t DeviceGetPCIBusId(char *pci_bus_id, int length, int device) = 0;
  virtual cudaError_t DeviceSynchronize() = 0;
  virtual cudaError_t DeviceSetLimit(cudaLimit limit, size_t value) = 0;
  virtual cudaError_t DeviceGetAttribute(int *value, cudaDeviceAttr attr, int device) = 0;
  virtual cudaError_t DeviceEnablePeerAccess(int peer, unsigned int flags) = 0;
  virtual cudaError_t DeviceDisablePeerAccess(int peer) = 0;
  // Whether the device's primary context is already made; asking makes none. (Most runtime calls,
  // cudaFuncGetAttributes among them, make the current device's context when it has none.)
  virtual bool DeviceHasContext(int device) = 0;
  virtual cudaError_t FuncGetAttributes(cudaFuncAttributes *attributes, const void *func) = 0;
  // Offset and size of a kernel's parameter; an error past the last one.
  virtual cudaError_t FuncGetParamInfo(const void *func, size_t index, size_t *offset,
                                       size_t *size) = 0;

  virtual cudaError_t Malloc(void **ptr, size_t bytes) = 0;
  virtual cudaError_t MallocPitch(void **ptr, size_t *pitch, size_t width, size_t height) = 0;
  virtual cudaError_t MallocManaged(void **ptr, size_t bytes, unsigned int flags) = 0;
  virtual cudaError_t Free(void *ptr) = 0;
  virtual cudaError_t Memcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind) = 0;
  virtual cudaError_t MemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind,
                                  cudaStream_t stream) = 0;
  virtual cudaError_t Memcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                               size_t width, size_t height, cudaMemcpyKind kind) = 0;
  virtual cudaError_t MemcpyPeer(void *dst, int dst_device, const void *src, int src_device,
                                 size_t count) = 0;
  virtual cudaError_t MemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
                                      size_t count, cudaStream_t stream) = 0;
  virtual cudaError_t Memset(void *ptr, int value, size_t count) = 0;
  virtual cudaError_t MemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream) = 0;
  virtual cudaError_t MemcpyToSymbol(const void *symbol, const void *src, size_t count,
                                     size_t offset, cudaMemcpyKind kind) = 0;
  virtual cudaError_t MemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                       cudaMemcpyKind kind) = 0;

  virtual cudaError_t StreamCreateWithFlags(cudaStream_t *stream, unsigned int flags) = 0;
  virtual cudaError_t StreamDestroy(cudaStream_t stream) = 0;
  virtual cudaError_t StreamSynchronize(cudaStream_t stream) = 0;
  virtual cudaError_t StreamQuery(cudaStream_t stream) = 0;
  virtual cudaError_t StreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                      unsigned int flags) = 0;
  virtual cudaError_t EventCreateWithFlags(cudaEvent_t *event, unsigned int flags) = 0;
  virtual cudaError_t EventRecord(cudaEvent_t event, cudaStream_t stream) = 0;
  virtual cudaError_t EventSynchronize(cudaEvent_t event) = 0;
  virtual cudaError_t EventQuery(cudaEvent_t event) = 0;
  virtual cudaError_t EventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) = 0;
  virtual cudaError_t EventDestroy(cudaEvent_t event) = 0;

  virtual cudaError_t LaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                                   size_t shared_bytes, cudaStream_t stream) = 0;
  virtual cudaError_t LaunchCooperativeKernel(const void *func, dim3 grid, dim3 block, void **args,
                                              size_t shared_bytes, cudaStream_t stream) = 0;
  // cudaLaunchKernelExC: a launch with attributes (thread-block clusters, ...).
  virtual cudaError_t LaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                                      void **args) = 0;

  // CUDA graphs: stream capture and the launch of an instantiated graph.
  virtual cudaError_t StreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) = 0;
  virtual cudaError_t StreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) = 0;
  virtual cudaError_t GraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                       unsigned long long flags) = 0;
  virtual cudaError_t GraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) = 0;

  // Virtual memory management (the driver's cuMem* calls): device addresses reserved when the
  // program allocates, backed by memory on the GPU mgbd chose only when its task is placed, so a
  // pointer never changes (docs/runtime.md, "Addresses"). Needs no CUDA context until the first
  // CreatePhysical. Sizes and addresses are multiples of the granularity.
  // cudaErrorNotSupported when the driver or a GPU lacks it (libmgb then binds eagerly).
  virtual cudaError_t AddressGranularity(size_t *bytes) = 0;
  virtual cudaError_t ReserveAddresses(size_t bytes, size_t alignment, uintptr_t *address) = 0;
  virtual cudaError_t FreeAddresses(uintptr_t address, size_t bytes) = 0;
  // Physical memory on `device`; released with ReleasePhysical once nothing maps it.
  virtual cudaError_t CreatePhysical(size_t bytes, int device, uint64_t *handle) = 0;
  virtual cudaError_t ReleasePhysical(uint64_t handle) = 0;
  // Maps `handle` at [address, address + bytes) with read/write access from `device`.
  virtual cudaError_t MapPhysical(uintptr_t address, size_t bytes, uint64_t handle, int device) = 0;
  virtual cudaError_t UnmapPhysical(uintptr_t address, size_t bytes) = 0;
};

// The CudaApi the process-wide runtime (the C API) uses. libmgb.a defines it (the real CUDA
// runtime); test programs linking mgb_runtime_core define their own.
CudaApi &DefaultCudaApi();

}  // namespace mgb::runtime

#endif  // MGB_RUNTIME_SRC_CUDA_API_H
