/* libmgb: the runtime linked into programs rewritten by mgb-rewrite.
 *
 * This header is the contract between the rewriter (which inserts these calls) and the runtime.
 * Everything here can be called from .cu files compiled by nvcc and from plain C++.
 *
 * Three kinds of call:
 *  - task probes (mgb_task_begin / mgb_task_end) around a GPU task the rewriter bound statically;
 *  - drop-in replacements mgb_cudaX for CUDA runtime calls that touch device memory, streams,
 *    events or the device choice. Each behaves exactly like cudaX for ordinary arguments (same
 *    signature, same return codes), and additionally
 *      * inside a task: checks allocations against the task's reservation (the guard), growing
 *        the reservation through mgbd before allocating past it;
 *      * outside any task: hands out addresses reserved for the memory (its real addresses, with
 *        no memory behind them yet) and stand-in stream/event handles, and records the operation
 *        (the lazy layer), to be replayed on the GPU mgbd chooses at the next launch that uses
 *        them, where the memory is mapped at those same addresses (docs/runtime.md, "Addresses");
 *  - mgb_launch_prepare + mgb_arg around a kernel launch the rewriter could not bind statically:
 *    prepare places (or grows) the lazy task owning the launch's buffers, maps them and replays
 *    their recorded operations; mgb_arg binds what it meets and returns its argument unchanged;
 *    mgb_real_stream turns a stand-in stream into the real one.
 *
 * Environment: MGB_SOCKET (mgbd's socket, default /tmp/mgbd.sock), MGB_UNMANAGED (what to do when
 * mgbd is not reachable; see docs/runtime.md).
 */
#ifndef MGB_RUNTIME_MGB_H
#define MGB_RUNTIME_MGB_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

/* Valid C89 on and C++98 on: rewritten sources keep the language standard they were written in. */

/* The twins take CUDA's default arguments in C++ (a call renamed by the #define fallback relies on
 * them: `cudaMemcpyAsync(d, h, n, kind)`). */
#ifdef __cplusplus
#define MGB_DEFAULT(value) = value
#else
#define MGB_DEFAULT(value)
#endif
#if defined(__cplusplus) && __cplusplus >= 201103L
#define MGB_NO_STREAM nullptr
#else
#define MGB_NO_STREAM 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mgb_dim3 {
  unsigned x, y, z;
} mgb_dim3;

/* A task handle; 0 means "no task" (the program runs unmanaged). */
typedef uint64_t mgb_task;

/* ---- task probes (static binding) ------------------------------------------------------------ */

/* Begins a GPU task needing memory_bytes of device memory whose widest launch is grid x block.
 * kernel (may be NULL) is the host stub of one of its kernels, for registers and shared memory.
 * site is "file:line" for messages. Returns once mgbd placed the task; the chosen GPU is then the
 * current device of the calling thread. Tasks nest: an inner begin joins the outer task. */
mgb_task mgb_task_begin(size_t memory_bytes, mgb_dim3 grid, mgb_dim3 block, const void *kernel,
                        const char *site);

/* Ends a task: waits for the device work the task issued, then releases its reservation. */
void mgb_task_end(mgb_task task);

/* ---- drop-in CUDA replacements (guard + lazy layer) --------------------------------------------
 */

cudaError_t mgb_cudaMalloc(void **ptr, size_t bytes);
cudaError_t mgb_cudaMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height);
cudaError_t mgb_cudaMallocManaged(void **ptr, size_t bytes,
                                  unsigned int flags MGB_DEFAULT(cudaMemAttachGlobal));
cudaError_t mgb_cudaFree(void *ptr);
cudaError_t mgb_cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t mgb_cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                cudaStream_t stream MGB_DEFAULT(MGB_NO_STREAM));
cudaError_t mgb_cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                             size_t height, enum cudaMemcpyKind kind);
cudaError_t mgb_cudaMemset(void *ptr, int value, size_t count);
cudaError_t mgb_cudaMemsetAsync(void *ptr, int value, size_t count,
                                cudaStream_t stream MGB_DEFAULT(MGB_NO_STREAM));
cudaError_t mgb_cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count,
                                   size_t offset MGB_DEFAULT(0),
                                   enum cudaMemcpyKind kind MGB_DEFAULT(cudaMemcpyHostToDevice));
cudaError_t mgb_cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count,
                                     size_t offset MGB_DEFAULT(0),
                                     enum cudaMemcpyKind kind MGB_DEFAULT(cudaMemcpyDeviceToHost));
cudaError_t mgb_cudaStreamCreate(cudaStream_t *stream);
cudaError_t mgb_cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags);
cudaError_t mgb_cudaStreamDestroy(cudaStream_t stream);
cudaError_t mgb_cudaStreamSynchronize(cudaStream_t stream);
cudaError_t mgb_cudaStreamQuery(cudaStream_t stream);
cudaError_t mgb_cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                    unsigned int flags MGB_DEFAULT(0));
cudaError_t mgb_cudaEventCreate(cudaEvent_t *event);
cudaError_t mgb_cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t mgb_cudaEventQuery(cudaEvent_t event);
cudaError_t mgb_cudaEventRecord(cudaEvent_t event, cudaStream_t stream MGB_DEFAULT(MGB_NO_STREAM));
cudaError_t mgb_cudaEventSynchronize(cudaEvent_t event);
cudaError_t mgb_cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t mgb_cudaEventDestroy(cudaEvent_t event);
cudaError_t mgb_cudaDeviceSetLimit(enum cudaLimit limit, size_t value);
/* The program's own device choice is recorded but does not move work: mgbd picks the GPU. */
cudaError_t mgb_cudaSetDevice(int device);
/* The device the program chose with cudaSetDevice (0 until it chose one), as CUDA would answer;
 * not the GPU mgbd placed its work on. */
cudaError_t mgb_cudaGetDevice(int *device);
cudaError_t mgb_cudaDeviceSynchronize(void);
/* Peer copies between the program's devices: by the unified addresses, which say where mgbd put
 * the memory (the device numbers are checked as CUDA checks them). */
cudaError_t mgb_cudaMemcpyPeer(void *dst, int dst_device, const void *src, int src_device,
                               size_t count);
cudaError_t mgb_cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
                                    size_t count, cudaStream_t stream MGB_DEFAULT(MGB_NO_STREAM));
/* Peer access from the program's own device (its cudaSetDevice), as CUDA would answer. */
cudaError_t mgb_cudaDeviceEnablePeerAccess(int peer_device, unsigned int flags);
cudaError_t mgb_cudaDeviceDisablePeerAccess(int peer_device);
/* The program's last error as CUDA would hold it without mgb: what its own calls and the mgb_
 * twins returned, never what libmgb's internal CUDA calls left. */
cudaError_t mgb_cudaGetLastError(void);
cudaError_t mgb_cudaPeekAtLastError(void);

/* CUDA graphs: the memory a capture uses is placed on one GPU before it begins; the capture, the
 * instantiation and every launch of the graph happen on that GPU. */
cudaError_t mgb_cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode);
cudaError_t mgb_cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph);
/* `unsigned long long` (the flags, as CUDA declares them) is not C89/C++98: no -pedantic(-errors)
 * diagnostic for it here. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wlong-long"
#endif
cudaError_t mgb_cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                     unsigned long long flags MGB_DEFAULT(0));
cudaError_t mgb_cudaGraphInstantiateWithFlags(cudaGraphExec_t *exec, cudaGraph_t graph,
                                              unsigned long long flags MGB_DEFAULT(0));
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
cudaError_t mgb_cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);

/* cudaLaunchKernel with a stand-in stream made real; when no task is current it prepares the lazy
 * task of the buffers in args first (as mgb_launch_prepare does, with the kernel's parameter sizes
 * from CUDA). */
cudaError_t mgb_cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                                 size_t shared_bytes, cudaStream_t stream);
/* cudaLaunchCooperativeKernel the same way (grid-wide synchronisation: every block resident). */
cudaError_t mgb_cudaLaunchCooperativeKernel(const void *func, dim3 grid, dim3 block, void **args,
                                            size_t shared_bytes, cudaStream_t stream);
#if CUDART_VERSION >= 11080
/* cudaLaunchKernelExC (thread-block clusters and other launch attributes) the same way; the
 * config's stand-in stream and the events its attributes name are made real. */
cudaError_t mgb_cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                                    void **args);
#endif

/* ---- lazy launches -----------------------------------------------------------------------------
 */

/* Places the lazy task owning the lazy buffers named among args[0..nargs) (pointers to the
 * launch's argument values, as cudaLaunchKernel takes them, each arg_sizes[i] bytes), maps them,
 * replays their recorded operations on its GPU and makes that GPU current. Arguments naming no
 * lazy buffer are ignored. */
cudaError_t mgb_launch_prepare(mgb_dim3 grid, mgb_dim3 block, const void *kernel, const char *site,
                               int nargs, const void *const *args, const size_t *arg_sizes);

/* Before a call into code mgb cannot see (a CUDA library: cuBLAS, cuSPARSE...): binds the lazy
 * buffers among pointers[0..n) to one task, as a launch would, and makes its GPU current. The C
 * form of mgb_prepare for such calls. */
cudaError_t mgb_prepare_pointers(const char *site, int n, const void *const *pointers);

/* Called (by mgb/unseen_tu.h, at start-up) for each translation unit compiled as written: that
 * code may receive any device pointer, so from then on every allocation is bound eagerly (real at
 * once, one task for the process) and no lazy address is handed out. */
#ifndef MGB_NOTE_UNSEEN_CODE_DECLARED /* also declared by mgb/unseen_tu.h (-Wredundant-decls) */
#define MGB_NOTE_UNSEEN_CODE_DECLARED
void mgb_note_unseen_code(const char *file);
#endif

/* Binds the lazy buffer at ptr (to this thread's task) if it is not yet; returns ptr: the address
 * is real already. */
void *mgb_real_ptr(const void *ptr);
/* Binds the lazy buffers named by the pointer-aligned words of bytes[0..size); the bytes are left
 * as they are. */
void mgb_translate_words(void *bytes, size_t size);
/* The real stream behind a stand-in stream on the current device. */
cudaStream_t mgb_real_stream(cudaStream_t stream);

#ifdef __cplusplus
} /* extern "C" */

/* ---- C++ conveniences for rewritten sources ----------------------------------------------------
 * C++98 on; mgb_arg and mgb_prepare (launches and library calls) need C++11. */

/* grid/block expressions are dim3 or integers; dim3 converts from both. */
inline mgb_dim3 mgb_dim(dim3 d) {
  mgb_dim3 r = {d.x, d.y, d.z};
  return r;
}

template <class T>
inline cudaError_t mgb_cudaMalloc(T **ptr, size_t bytes) {
  return mgb_cudaMalloc(reinterpret_cast<void **>(ptr), bytes);
}
template <class T>
inline cudaError_t mgb_cudaMallocPitch(T **ptr, size_t *pitch, size_t width, size_t height) {
  return mgb_cudaMallocPitch(reinterpret_cast<void **>(ptr), pitch, width, height);
}
template <class T>
inline cudaError_t mgb_cudaMallocManaged(T **ptr, size_t bytes,
                                         unsigned int flags = cudaMemAttachGlobal) {
  return mgb_cudaMallocManaged(reinterpret_cast<void **>(ptr), bytes, flags);
}
/* cudaMemcpyToSymbol(symbol, ...) takes the symbol by reference in CUDA's C++ API. */
template <class T>
inline cudaError_t mgb_cudaMemcpyToSymbol(const T &symbol, const void *src, size_t count,
                                          size_t offset = 0,
                                          cudaMemcpyKind kind = cudaMemcpyHostToDevice) {
  return mgb_cudaMemcpyToSymbol(reinterpret_cast<const void *>(&symbol), src, count, offset, kind);
}
template <class T>
inline cudaError_t mgb_cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t count,
                                            size_t offset = 0,
                                            cudaMemcpyKind kind = cudaMemcpyDeviceToHost) {
  return mgb_cudaMemcpyFromSymbol(dst, reinterpret_cast<const void *>(&symbol), count, offset,
                                  kind);
}

/* cuda_runtime.h's templates that take the kernel itself: a renamed call stays as written. */
template <class T>
inline cudaError_t mgb_cudaLaunchKernel(const T *func, dim3 grid, dim3 block, void **args,
                                        size_t shared_bytes = 0,
                                        cudaStream_t stream = MGB_NO_STREAM) {
  return mgb_cudaLaunchKernel(reinterpret_cast<const void *>(func), grid, block, args, shared_bytes,
                              stream);
}
template <class T>
inline cudaError_t mgb_cudaLaunchCooperativeKernel(T *func, dim3 grid, dim3 block, void **args,
                                                   size_t shared_bytes = 0,
                                                   cudaStream_t stream = MGB_NO_STREAM) {
  return mgb_cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(func), grid, block, args,
                                         shared_bytes, stream);
}

/* cuda_runtime.h's C++ overload cudaEventCreate(event, flags). */
inline cudaError_t mgb_cudaEventCreate(cudaEvent_t *event, unsigned int flags) {
  return mgb_cudaEventCreateWithFlags(event, flags);
}

/* cuda_runtime.h's older five-argument cudaGraphInstantiate (error node and log unused). */
inline cudaError_t mgb_cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                            cudaGraphNode_t *error_node, char *log,
                                            size_t log_size) {
  (void)error_node;
  (void)log;
  (void)log_size;
  return mgb_cudaGraphInstantiate(exec, graph, 0);
}

#if __cplusplus >= 201103L
#include <type_traits>
#include <utility>

/* The value a kernel argument must have: itself, once the lazy buffers it names (a pointer, or
 * pointers inside a trivially copyable struct) are bound, so that their memory is mapped.
 * Tag dispatch rather than `if constexpr`: rewritten sources may be compiled at -std=c++11. */
namespace mgb_detail {
/* 0: a pointer; 1: trivially copyable and at least pointer-sized; 2: anything else. */
template <class T>
struct arg_kind
    : std::integral_constant<
          int, std::is_pointer<T>::value                                               ? 0
               : (std::is_trivially_copyable<T>::value && sizeof(T) >= sizeof(void *)) ? 1
                                                                                       : 2> {};
template <class T>
inline T arg(const T &value, std::integral_constant<int, 0>) {
  return static_cast<T>(mgb_real_ptr(reinterpret_cast<const void *>(value)));
}
template <class T>
inline T arg(const T &value, std::integral_constant<int, 1>) {
  T copy = value;
  mgb_translate_words(&copy, sizeof(T));
  return copy;
}
} /* namespace mgb_detail */

template <class T>
inline typename std::enable_if<mgb_detail::arg_kind<typename std::decay<T>::type>::value != 2,
                               typename std::decay<T>::type>::type
mgb_arg(T &&value) {
  typedef typename std::decay<T>::type V;
  return mgb_detail::arg<V>(value, std::integral_constant<int, mgb_detail::arg_kind<V>::value>());
}
/* Anything else is the argument itself, as given: the launch copies it as it would have (a class
 * whose only copy constructor takes a non-const reference, SlabHash's contexts, copies from the
 * lvalue the program wrote). */
template <class T>
inline typename std::enable_if<mgb_detail::arg_kind<typename std::decay<T>::type>::value == 2,
                               T &&>::type
mgb_arg(T &&value) {
  return std::forward<T>(value);
}

/* mgb_prepare(grid, block, kernel, site, args...): mgb_launch_prepare with the arguments' values.
 */
template <class... Args>
inline cudaError_t mgb_prepare(mgb_dim3 grid, mgb_dim3 block, const void *kernel, const char *site,
                               const Args &...args) {
  const void *values[sizeof...(Args) + 1] = {static_cast<const void *>(&args)..., nullptr};
  const size_t sizes[sizeof...(Args) + 1] = {sizeof(Args)..., 0};
  return mgb_launch_prepare(grid, block, kernel, site, static_cast<int>(sizeof...(Args)), values,
                            sizes);
}

#if CUDART_VERSION >= 11080
/* cuda_runtime.h's cudaLaunchKernelEx templates, calling mgb_cudaLaunchKernelExC: the arguments
 * are converted to the kernel's parameter types first, as CUDA's own template does. */
template <class... ExpTypes, class... ActTypes>
inline cudaError_t mgb_cudaLaunchKernelEx(const cudaLaunchConfig_t *config,
                                          void (*kernel)(ExpTypes...), ActTypes &&...args) {
  return [&](ExpTypes... coerced) {
    void *values[sizeof...(ExpTypes) + 1] = {
        const_cast<void *>(static_cast<const void *>(&coerced))..., nullptr};
    return mgb_cudaLaunchKernelExC(config, reinterpret_cast<const void *>(kernel), values);
  }(std::forward<ActTypes>(args)...);
}
#if CUDART_VERSION >= 12000
template <class... ActTypes>
inline cudaError_t mgb_cudaLaunchKernelEx(const cudaLaunchConfig_t *config,
                                          const cudaKernel_t kernel, ActTypes &&...args) {
  void *values[sizeof...(ActTypes) + 1] = {const_cast<void *>(static_cast<const void *>(&args))...,
                                           nullptr};
  return mgb_cudaLaunchKernelExC(config, reinterpret_cast<const void *>(kernel), values);
}
#endif
#endif
#endif /* C++11 */
#endif /* __cplusplus */

#endif /* MGB_RUNTIME_MGB_H */
