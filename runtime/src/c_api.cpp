// The C API of mgb.h: each function forwards to the process-wide Runtime, inside a
// ProgramErrorScope, so the program's CUDA last error is what CUDA alone would have left
// (program_errors.h).
#include "mgb/mgb.h"

#include "fresh_heap.h"
#include "program_errors.h"
#include "runtime.h"

using mgb::runtime::ProgramErrorScope;
using mgb::runtime::Runtime;

namespace {
Runtime &R() { return Runtime::Global(); }

mgb::runtime::CudaApi &Api() {
  // The scope's first cudaGetLastError may initialise CUDA, which must come after the session
  // set CUDA_MPS_PIPE_DIRECTORY: open the session once before that. The program's first call
  // into libmgb also ends the zeroing of its fresh heap (fresh_heap.h).
  static const bool opened = (mgb::runtime::StopZeroingFreshHeap(), R().Managed(), true);
  (void)opened;
  return mgb::runtime::DefaultCudaApi();  // the one Global() uses
}

// A twin of a CUDA call (or a probe standing for one: a launch's placement): its failure becomes
// the program's last error, as the call's would.
template <class Call>
cudaError_t Twin(Call call) {
  ProgramErrorScope scope(Api());
  return scope.Return(call());
}

// An entry point that is no CUDA call: the program's last error stays as it was.
template <class Call>
auto Entry(Call call) {
  ProgramErrorScope scope(Api());
  return call();
}
}  // namespace

extern "C" {

mgb_task mgb_task_begin(size_t memory_bytes, mgb_dim3 grid, mgb_dim3 block, const void *kernel,
                        const char *site) {
  return Entry([&] { return R().TaskBegin(memory_bytes, grid, block, kernel, site); });
}
void mgb_task_end(mgb_task task) {
  Entry([&] { R().TaskEnd(task); });
}

cudaError_t mgb_cudaMalloc(void **ptr, size_t bytes) {
  return Twin([&] { return R().Malloc(ptr, bytes); });
}
cudaError_t mgb_cudaMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height) {
  return Twin([&] { return R().MallocPitch(ptr, pitch, width, height); });
}
cudaError_t mgb_cudaMallocManaged(void **ptr, size_t bytes, unsigned int flags) {
  return Twin([&] { return R().MallocManaged(ptr, bytes, flags); });
}
cudaError_t mgb_cudaFree(void *ptr) {
  return Twin([&] { return R().Free(ptr); });
}
cudaError_t mgb_cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind) {
  return Twin([&] { return R().Memcpy(dst, src, count, kind, std::nullopt); });
}
cudaError_t mgb_cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                cudaStream_t stream) {
  return Twin([&] { return R().Memcpy(dst, src, count, kind, stream); });
}
cudaError_t mgb_cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                             size_t height, enum cudaMemcpyKind kind) {
  return Twin([&] { return R().Memcpy2D(dst, dpitch, src, spitch, width, height, kind); });
}
cudaError_t mgb_cudaMemset(void *ptr, int value, size_t count) {
  return Twin([&] { return R().Memset(ptr, value, count, std::nullopt); });
}
cudaError_t mgb_cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream) {
  return Twin([&] { return R().Memset(ptr, value, count, stream); });
}
cudaError_t mgb_cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                                   enum cudaMemcpyKind kind) {
  return Twin([&] { return R().MemcpyToSymbol(symbol, src, count, offset, kind); });
}
cudaError_t mgb_cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                     enum cudaMemcpyKind kind) {
  return Twin([&] { return R().MemcpyFromSymbol(dst, symbol, count, offset, kind); });
}
cudaError_t mgb_cudaStreamCreate(cudaStream_t *stream) {
  return Twin([&] { return R().StreamCreate(stream, cudaStreamDefault); });
}
cudaError_t mgb_cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags) {
  return Twin([&] { return R().StreamCreate(stream, flags); });
}
cudaError_t mgb_cudaStreamDestroy(cudaStream_t stream) {
  return Twin([&] { return R().StreamDestroy(stream); });
}
cudaError_t mgb_cudaStreamSynchronize(cudaStream_t stream) {
  return Twin([&] { return R().StreamSynchronize(stream); });
}
cudaError_t mgb_cudaStreamQuery(cudaStream_t stream) {
  return Twin([&] { return R().StreamQuery(stream); });
}
cudaError_t mgb_cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  return Twin([&] { return R().StreamWaitEvent(stream, event, flags); });
}
cudaError_t mgb_cudaEventCreate(cudaEvent_t *event) {
  return Twin([&] { return R().EventCreate(event, cudaEventDefault); });
}
cudaError_t mgb_cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags) {
  return Twin([&] { return R().EventCreate(event, flags); });
}
cudaError_t mgb_cudaEventQuery(cudaEvent_t event) {
  return Twin([&] { return R().EventQuery(event); });
}
cudaError_t mgb_cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return Twin([&] { return R().EventRecord(event, stream); });
}
cudaError_t mgb_cudaEventSynchronize(cudaEvent_t event) {
  return Twin([&] { return R().EventSynchronize(event); });
}
cudaError_t mgb_cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  return Twin([&] { return R().EventElapsedTime(ms, start, end); });
}
cudaError_t mgb_cudaEventDestroy(cudaEvent_t event) {
  return Twin([&] { return R().EventDestroy(event); });
}
cudaError_t mgb_cudaDeviceSetLimit(enum cudaLimit limit, size_t value) {
  return Twin([&] { return R().DeviceSetLimit(limit, value); });
}
cudaError_t mgb_cudaSetDevice(int device) {
  return Twin([&] { return R().SetDevice(device); });
}
cudaError_t mgb_cudaGetDevice(int *device) {
  return Twin([&] { return R().GetDevice(device); });
}
cudaError_t mgb_cudaDeviceSynchronize(void) {
  return Twin([&] { return R().DeviceSynchronize(); });
}
cudaError_t mgb_cudaMemcpyPeer(void *dst, int dst_device, const void *src, int src_device,
                               size_t count) {
  return Twin(
      [&] { return R().MemcpyPeer(dst, dst_device, src, src_device, count, std::nullopt); });
}
cudaError_t mgb_cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
                                    size_t count, cudaStream_t stream) {
  return Twin([&] { return R().MemcpyPeer(dst, dst_device, src, src_device, count, stream); });
}
cudaError_t mgb_cudaDeviceEnablePeerAccess(int peer_device, unsigned int flags) {
  return Twin([&] { return R().DeviceEnablePeerAccess(peer_device, flags); });
}
cudaError_t mgb_cudaDeviceDisablePeerAccess(int peer_device) {
  return Twin([&] { return R().DeviceDisablePeerAccess(peer_device); });
}
cudaError_t mgb_cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                                 size_t shared_bytes, cudaStream_t stream) {
  return Twin([&] { return R().LaunchKernel(func, grid, block, args, shared_bytes, stream); });
}
cudaError_t mgb_cudaLaunchCooperativeKernel(const void *func, dim3 grid, dim3 block, void **args,
                                            size_t shared_bytes, cudaStream_t stream) {
  return Twin(
      [&] { return R().LaunchCooperativeKernel(func, grid, block, args, shared_bytes, stream); });
}
cudaError_t mgb_cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                                    void **args) {
  return Twin([&] { return R().LaunchKernelExC(config, func, args); });
}

cudaError_t mgb_cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode) {
  return Twin([&] { return R().StreamBeginCapture(stream, mode); });
}
cudaError_t mgb_cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) {
  return Twin([&] { return R().StreamEndCapture(stream, graph); });
}
cudaError_t mgb_cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                     unsigned long long flags) {
  return Twin([&] { return R().GraphInstantiate(exec, graph, flags); });
}
cudaError_t mgb_cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t graph,
                                              unsigned long long flags) {
  return Twin([&] { return R().GraphInstantiate(exec, graph, flags); });
}
cudaError_t mgb_cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  return Twin([&] { return R().GraphLaunch(exec, stream); });
}

cudaError_t mgb_prepare_pointers(const char *site, int n, const void *const *pointers) {
  return Twin([&] { return R().PreparePointers(site, n, pointers); });
}
// No scope: it makes no CUDA call, and runs from static constructors, before CUDA may be touched.
void mgb_note_unseen_code(const char *) { Runtime::NoteUnseenCodeInProcess(); }

cudaError_t mgb_launch_prepare(mgb_dim3 grid, mgb_dim3 block, const void *kernel, const char *site,
                               int nargs, const void *const *args, const size_t *arg_sizes) {
  return Twin([&] { return R().LaunchPrepare(grid, block, kernel, site, nargs, args, arg_sizes); });
}
void *mgb_real_ptr(const void *ptr) {
  return Entry([&] { return R().RealPtr(ptr); });
}
void mgb_translate_words(void *bytes, size_t size) {
  Entry([&] { R().TranslateWords(bytes, size); });
}
cudaStream_t mgb_real_stream(cudaStream_t stream) {
  return Entry([&] { return R().RealStream(stream); });
}

// Not in a scope: they read the program's error instead of changing it.
cudaError_t mgb_cudaGetLastError(void) { return mgb::runtime::ProgramGetLastError(Api()); }
cudaError_t mgb_cudaPeekAtLastError(void) { return mgb::runtime::ProgramPeekAtLastError(Api()); }

}  // extern "C"
