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

/* Valid C89 on and C++98 on: rewritten sources keep the language standard they were written in.
 * Every name declared here is mgb_-prefixed, parameters and template parameters included: the
 * program's command-line macros (`-DV=4`, `-Dn=...`) meet this header, which the program never
 * included itself (round 15: a -DV= broke mgb_arg's `V`). */

/* The twins take CUDA's default arguments in C++ (a call renamed by the #define fallback relies on
 * them: `cudaMemcpyAsync(d, h, n, kind)`). */
#ifdef __cplusplus
#define MGB_DEFAULT(mgb_value) = mgb_value
#else
#define MGB_DEFAULT(mgb_value)
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
mgb_task mgb_task_begin(size_t mgb_memory_bytes, mgb_dim3 mgb_grid, mgb_dim3 mgb_block,
                        const void *mgb_kernel, const char *mgb_site);

/* Ends a task: waits for the device work the task issued, then releases its reservation. */
void mgb_task_end(mgb_task mgb_task_handle);

/* ---- drop-in CUDA replacements (guard + lazy layer) --------------------------------------------
 */

cudaError_t mgb_cudaMalloc(void **mgb_ptr, size_t mgb_bytes);
cudaError_t mgb_cudaMallocPitch(void **mgb_ptr, size_t *mgb_pitch, size_t mgb_width,
                                size_t mgb_height);
cudaError_t mgb_cudaMallocManaged(void **mgb_ptr, size_t mgb_bytes,
                                  unsigned int mgb_flags MGB_DEFAULT(cudaMemAttachGlobal));
cudaError_t mgb_cudaFree(void *mgb_ptr);
cudaError_t mgb_cudaMemcpy(void *mgb_dst, const void *mgb_src, size_t mgb_count,
                           enum cudaMemcpyKind mgb_kind);
cudaError_t mgb_cudaMemcpyAsync(void *mgb_dst, const void *mgb_src, size_t mgb_count,
                                enum cudaMemcpyKind mgb_kind,
                                cudaStream_t mgb_stream MGB_DEFAULT(MGB_NO_STREAM));
cudaError_t mgb_cudaMemcpy2D(void *mgb_dst, size_t mgb_dpitch, const void *mgb_src,
                             size_t mgb_spitch, size_t mgb_width, size_t mgb_height,
                             enum cudaMemcpyKind mgb_kind);
cudaError_t mgb_cudaMemset(void *mgb_ptr, int mgb_value, size_t mgb_count);
cudaError_t mgb_cudaMemsetAsync(void *mgb_ptr, int mgb_value, size_t mgb_count,
                                cudaStream_t mgb_stream MGB_DEFAULT(MGB_NO_STREAM));
cudaError_t mgb_cudaMemcpyToSymbol(
    const void *mgb_symbol, const void *mgb_src, size_t mgb_count, size_t mgb_offset MGB_DEFAULT(0),
    enum cudaMemcpyKind mgb_kind MGB_DEFAULT(cudaMemcpyHostToDevice));
cudaError_t mgb_cudaMemcpyFromSymbol(
    void *mgb_dst, const void *mgb_symbol, size_t mgb_count, size_t mgb_offset MGB_DEFAULT(0),
    enum cudaMemcpyKind mgb_kind MGB_DEFAULT(cudaMemcpyDeviceToHost));
cudaError_t mgb_cudaStreamCreate(cudaStream_t *mgb_stream);
cudaError_t mgb_cudaStreamCreateWithFlags(cudaStream_t *mgb_stream, unsigned int mgb_flags);
cudaError_t mgb_cudaStreamDestroy(cudaStream_t mgb_stream);
cudaError_t mgb_cudaStreamSynchronize(cudaStream_t mgb_stream);
cudaError_t mgb_cudaStreamQuery(cudaStream_t mgb_stream);
cudaError_t mgb_cudaStreamWaitEvent(cudaStream_t mgb_stream, cudaEvent_t mgb_event,
                                    unsigned int mgb_flags MGB_DEFAULT(0));
cudaError_t mgb_cudaEventCreate(cudaEvent_t *mgb_event);
cudaError_t mgb_cudaEventCreateWithFlags(cudaEvent_t *mgb_event, unsigned int mgb_flags);
cudaError_t mgb_cudaEventQuery(cudaEvent_t mgb_event);
cudaError_t mgb_cudaEventRecord(cudaEvent_t mgb_event,
                                cudaStream_t mgb_stream MGB_DEFAULT(MGB_NO_STREAM));
cudaError_t mgb_cudaEventSynchronize(cudaEvent_t mgb_event);
cudaError_t mgb_cudaEventElapsedTime(float *mgb_ms, cudaEvent_t mgb_start, cudaEvent_t mgb_end);
cudaError_t mgb_cudaEventDestroy(cudaEvent_t mgb_event);
cudaError_t mgb_cudaDeviceSetLimit(enum cudaLimit mgb_limit, size_t mgb_value);
/* The program's own device choice is recorded but does not move work: mgbd picks the GPU. */
cudaError_t mgb_cudaSetDevice(int mgb_device);
/* The device the program chose with cudaSetDevice (0 until it chose one), as CUDA would answer;
 * not the GPU mgbd placed its work on. */
cudaError_t mgb_cudaGetDevice(int *mgb_device);
cudaError_t mgb_cudaDeviceSynchronize(void);
/* Peer copies between the program's devices: by the unified addresses, which say where mgbd put
 * the memory (the device numbers are checked as CUDA checks them). */
cudaError_t mgb_cudaMemcpyPeer(void *mgb_dst, int mgb_dst_device, const void *mgb_src,
                               int mgb_src_device, size_t mgb_count);
cudaError_t mgb_cudaMemcpyPeerAsync(void *mgb_dst, int mgb_dst_device, const void *mgb_src,
                                    int mgb_src_device, size_t mgb_count,
                                    cudaStream_t mgb_stream MGB_DEFAULT(MGB_NO_STREAM));
/* Peer access from the program's own device (its cudaSetDevice), as CUDA would answer. */
cudaError_t mgb_cudaDeviceEnablePeerAccess(int mgb_peer_device, unsigned int mgb_flags);
cudaError_t mgb_cudaDeviceDisablePeerAccess(int mgb_peer_device);
/* The program's last error as CUDA would hold it without mgb: what its own calls and the mgb_
 * twins returned, never what libmgb's internal CUDA calls left. */
cudaError_t mgb_cudaGetLastError(void);
cudaError_t mgb_cudaPeekAtLastError(void);

/* CUDA graphs: the memory a capture uses is placed on one GPU before it begins; the capture, the
 * instantiation and every launch of the graph happen on that GPU. */
cudaError_t mgb_cudaStreamBeginCapture(cudaStream_t mgb_stream,
                                       enum cudaStreamCaptureMode mgb_mode);
cudaError_t mgb_cudaStreamEndCapture(cudaStream_t mgb_stream, cudaGraph_t *mgb_graph);
/* `unsigned long long` (the flags, as CUDA declares them) is not C89/C++98: no -pedantic(-errors)
 * diagnostic for it here. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wlong-long"
#endif
cudaError_t mgb_cudaGraphInstantiate(cudaGraphExec_t *mgb_exec, cudaGraph_t mgb_graph,
                                     unsigned long long mgb_flags MGB_DEFAULT(0));
cudaError_t mgb_cudaGraphInstantiateWithFlags(cudaGraphExec_t *mgb_exec, cudaGraph_t mgb_graph,
                                              unsigned long long mgb_flags MGB_DEFAULT(0));
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
cudaError_t mgb_cudaGraphLaunch(cudaGraphExec_t mgb_exec, cudaStream_t mgb_stream);

/* cudaLaunchKernel with a stand-in stream made real; when no task is current it prepares the lazy
 * task of the buffers in args first (as mgb_launch_prepare does, with the kernel's parameter sizes
 * from CUDA). */
cudaError_t mgb_cudaLaunchKernel(const void *mgb_func, dim3 mgb_grid, dim3 mgb_block,
                                 void **mgb_args, size_t mgb_shared_bytes, cudaStream_t mgb_stream);
/* cudaLaunchCooperativeKernel the same way (grid-wide synchronisation: every block resident). */
cudaError_t mgb_cudaLaunchCooperativeKernel(const void *mgb_func, dim3 mgb_grid, dim3 mgb_block,
                                            void **mgb_args, size_t mgb_shared_bytes,
                                            cudaStream_t mgb_stream);
#if CUDART_VERSION >= 11080
/* cudaLaunchKernelExC (thread-block clusters and other launch attributes) the same way; the
 * config's stand-in stream and the events its attributes name are made real. */
cudaError_t mgb_cudaLaunchKernelExC(const cudaLaunchConfig_t *mgb_config, const void *mgb_func,
                                    void **mgb_args);
#endif

/* ---- lazy launches -----------------------------------------------------------------------------
 */

/* Places the lazy task owning the lazy buffers named among args[0..nargs) (pointers to the
 * launch's argument values, as cudaLaunchKernel takes them, each arg_sizes[i] bytes), maps them,
 * replays their recorded operations on its GPU and makes that GPU current. Arguments naming no
 * lazy buffer are ignored. */
cudaError_t mgb_launch_prepare(mgb_dim3 mgb_grid, mgb_dim3 mgb_block, const void *mgb_kernel,
                               const char *mgb_site, int mgb_nargs, const void *const *mgb_args,
                               const size_t *mgb_arg_sizes);

/* Before a call into code mgb cannot see (a CUDA library: cuBLAS, cuSPARSE...): binds the lazy
 * buffers among pointers[0..n) to one task, as a launch would, and makes its GPU current. The C
 * form of mgb_prepare for such calls. */
cudaError_t mgb_prepare_pointers(const char *mgb_site, int mgb_n, const void *const *mgb_pointers);

/* Called (by mgb/unseen_tu.h, at start-up) for each translation unit compiled as written: that
 * code may receive any device pointer, so from then on every allocation is bound eagerly (real at
 * once, one task for the process) and no lazy address is handed out. */
#ifndef MGB_NOTE_UNSEEN_CODE_DECLARED /* also declared by mgb/unseen_tu.h (-Wredundant-decls) */
#define MGB_NOTE_UNSEEN_CODE_DECLARED
void mgb_note_unseen_code(const char *mgb_file);
#endif

/* Binds the lazy buffer at ptr (to this thread's task) if it is not yet; returns ptr: the address
 * is real already. */
void *mgb_real_ptr(const void *mgb_ptr);
/* Binds the lazy buffers named by the pointer-aligned words of bytes[0..size); the bytes are left
 * as they are. */
void mgb_translate_words(void *mgb_bytes, size_t mgb_size);
/* The real stream behind a stand-in stream on the current device. */
cudaStream_t mgb_real_stream(cudaStream_t mgb_stream);

#ifdef __cplusplus
} /* extern "C" */

/* ---- C++ conveniences for rewritten sources ----------------------------------------------------
 * C++98 on; mgb_arg and mgb_prepare (launches and library calls) need C++11. */

/* grid/block expressions are dim3 or integers; dim3 converts from both. */
inline mgb_dim3 mgb_dim(dim3 mgb_d) {
  mgb_dim3 mgb_r = {mgb_d.x, mgb_d.y, mgb_d.z};
  return mgb_r;
}

template <class mgb_T>
inline cudaError_t mgb_cudaMalloc(mgb_T **mgb_ptr, size_t mgb_bytes) {
  return mgb_cudaMalloc(reinterpret_cast<void **>(mgb_ptr), mgb_bytes);
}
template <class mgb_T>
inline cudaError_t mgb_cudaMallocPitch(mgb_T **mgb_ptr, size_t *mgb_pitch, size_t mgb_width,
                                       size_t mgb_height) {
  return mgb_cudaMallocPitch(reinterpret_cast<void **>(mgb_ptr), mgb_pitch, mgb_width, mgb_height);
}
template <class mgb_T>
inline cudaError_t mgb_cudaMallocManaged(mgb_T **mgb_ptr, size_t mgb_bytes,
                                         unsigned int mgb_flags = cudaMemAttachGlobal) {
  return mgb_cudaMallocManaged(reinterpret_cast<void **>(mgb_ptr), mgb_bytes, mgb_flags);
}
/* cudaMemcpyToSymbol(symbol, ...) takes the symbol by reference in CUDA's C++ API. */
template <class mgb_T>
inline cudaError_t mgb_cudaMemcpyToSymbol(const mgb_T &mgb_symbol, const void *mgb_src,
                                          size_t mgb_count, size_t mgb_offset = 0,
                                          cudaMemcpyKind mgb_kind = cudaMemcpyHostToDevice) {
  return mgb_cudaMemcpyToSymbol(reinterpret_cast<const void *>(&mgb_symbol), mgb_src, mgb_count,
                                mgb_offset, mgb_kind);
}
template <class mgb_T>
inline cudaError_t mgb_cudaMemcpyFromSymbol(void *mgb_dst, const mgb_T &mgb_symbol,
                                            size_t mgb_count, size_t mgb_offset = 0,
                                            cudaMemcpyKind mgb_kind = cudaMemcpyDeviceToHost) {
  return mgb_cudaMemcpyFromSymbol(mgb_dst, reinterpret_cast<const void *>(&mgb_symbol), mgb_count,
                                  mgb_offset, mgb_kind);
}

/* cuda_runtime.h's templates that take the kernel itself: a renamed call stays as written. */
template <class mgb_T>
inline cudaError_t mgb_cudaLaunchKernel(const mgb_T *mgb_func, dim3 mgb_grid, dim3 mgb_block,
                                        void **mgb_args, size_t mgb_shared_bytes = 0,
                                        cudaStream_t mgb_stream = MGB_NO_STREAM) {
  return mgb_cudaLaunchKernel(reinterpret_cast<const void *>(mgb_func), mgb_grid, mgb_block,
                              mgb_args, mgb_shared_bytes, mgb_stream);
}
template <class mgb_T>
inline cudaError_t mgb_cudaLaunchCooperativeKernel(mgb_T *mgb_func, dim3 mgb_grid, dim3 mgb_block,
                                                   void **mgb_args, size_t mgb_shared_bytes = 0,
                                                   cudaStream_t mgb_stream = MGB_NO_STREAM) {
  return mgb_cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(mgb_func), mgb_grid,
                                         mgb_block, mgb_args, mgb_shared_bytes, mgb_stream);
}

/* cuda_runtime.h's C++ overload cudaEventCreate(event, flags). */
inline cudaError_t mgb_cudaEventCreate(cudaEvent_t *mgb_event, unsigned int mgb_flags) {
  return mgb_cudaEventCreateWithFlags(mgb_event, mgb_flags);
}

/* cuda_runtime.h's older five-argument cudaGraphInstantiate (error node and log unused). */
inline cudaError_t mgb_cudaGraphInstantiate(cudaGraphExec_t *mgb_exec, cudaGraph_t mgb_graph,
                                            cudaGraphNode_t *mgb_error_node, char *mgb_log,
                                            size_t mgb_log_size) {
  (void)mgb_error_node;
  (void)mgb_log;
  (void)mgb_log_size;
  return mgb_cudaGraphInstantiate(mgb_exec, mgb_graph, 0);
}

#if __cplusplus >= 201103L
#include <type_traits>
#include <utility>

/* The value a kernel argument must have: itself, once the lazy buffers it names (a pointer, or
 * pointers inside a trivially copyable struct) are bound, so that their memory is mapped.
 * Tag dispatch rather than `if constexpr`: rewritten sources may be compiled at -std=c++11. */
namespace mgb_detail {
/* A `T *__restrict__` argument (a launcher's restrict-qualified parameter, passed on) is a pointer
 * like any other here: std::is_pointer does not see it as one, and its address does not convert
 * to `const void *` (round 15, multi-gpu-programming-models). */
template <class mgb_T>
struct mgb_unrestricted {
  typedef mgb_T type;
};
template <class mgb_T>
struct mgb_unrestricted<mgb_T *__restrict__> {
  typedef mgb_T *type;
};
/* An argument's address; a restrict-qualified pointer's through const_cast (static_cast may not
 * drop the qualifier, and a C cast would trip -Wold-style-cast in the program's build). */
template <class mgb_T>
inline const void *mgb_address(const mgb_T &mgb_value) {
  return static_cast<const void *>(
      const_cast<const typename mgb_unrestricted<mgb_T>::type *>(&mgb_value));
}
template <class mgb_T>
struct mgb_argument_type : mgb_unrestricted<typename std::decay<mgb_T>::type> {};
/* 0: a pointer; 1: trivially copyable and at least pointer-sized; 2: anything else. */
template <class mgb_T>
struct mgb_arg_kind : std::integral_constant<int, std::is_pointer<mgb_T>::value ? 0
                                                  : (std::is_trivially_copyable<mgb_T>::value &&
                                                     sizeof(mgb_T) >= sizeof(void *))
                                                      ? 1
                                                      : 2> {};
template <class mgb_T>
inline mgb_T mgb_bound_arg(const mgb_T &mgb_value, std::integral_constant<int, 0>) {
  return static_cast<mgb_T>(mgb_real_ptr(reinterpret_cast<const void *>(mgb_value)));
}
template <class mgb_T>
inline mgb_T mgb_bound_arg(const mgb_T &mgb_value, std::integral_constant<int, 1>) {
  mgb_T mgb_copy = mgb_value;
  mgb_translate_words(&mgb_copy, sizeof(mgb_T));
  return mgb_copy;
}
} /* namespace mgb_detail */

template <class mgb_T>
inline typename std::enable_if<
    mgb_detail::mgb_arg_kind<typename mgb_detail::mgb_argument_type<mgb_T>::type>::value != 2,
    typename mgb_detail::mgb_argument_type<mgb_T>::type>::type
mgb_arg(mgb_T &&mgb_value) {
  typedef typename mgb_detail::mgb_argument_type<mgb_T>::type mgb_V;
  const mgb_V mgb_plain = mgb_value; /* a restrict-qualified lvalue binds no `const mgb_V &` */
  return mgb_detail::mgb_bound_arg<mgb_V>(
      mgb_plain, std::integral_constant<int, mgb_detail::mgb_arg_kind<mgb_V>::value>());
}
/* Anything else is the argument itself, as given: the launch copies it as it would have (a class
 * whose only copy constructor takes a non-const reference, SlabHash's contexts, copies from the
 * lvalue the program wrote). */
template <class mgb_T>
inline typename std::enable_if<
    mgb_detail::mgb_arg_kind<typename mgb_detail::mgb_argument_type<mgb_T>::type>::value == 2,
    mgb_T &&>::type
mgb_arg(mgb_T &&mgb_value) {
  return std::forward<mgb_T>(mgb_value);
}

/* mgb_prepare(grid, block, kernel, site, args...): mgb_launch_prepare with the arguments'
 * values. */
template <class... mgb_Args>
inline cudaError_t mgb_prepare(mgb_dim3 mgb_grid, mgb_dim3 mgb_block, const void *mgb_kernel,
                               const char *mgb_site, const mgb_Args &...mgb_args) {
  const void *mgb_values[sizeof...(mgb_Args) + 1] = {mgb_detail::mgb_address(mgb_args)..., nullptr};
  const size_t mgb_sizes[sizeof...(mgb_Args) + 1] = {sizeof(mgb_Args)..., 0};
  return mgb_launch_prepare(mgb_grid, mgb_block, mgb_kernel, mgb_site,
                            static_cast<int>(sizeof...(mgb_Args)), mgb_values, mgb_sizes);
}

#if CUDART_VERSION >= 11080
/* cuda_runtime.h's cudaLaunchKernelEx templates, calling mgb_cudaLaunchKernelExC: the arguments
 * are converted to the kernel's parameter types first, as CUDA's own template does. */
template <class... mgb_ExpTypes, class... mgb_ActTypes>
inline cudaError_t mgb_cudaLaunchKernelEx(const cudaLaunchConfig_t *mgb_config,
                                          void (*mgb_kernel)(mgb_ExpTypes...),
                                          mgb_ActTypes &&...mgb_args) {
  return [&](mgb_ExpTypes... mgb_coerced) {
    void *mgb_values[sizeof...(mgb_ExpTypes) + 1] = {
        const_cast<void *>(static_cast<const void *>(&mgb_coerced))..., nullptr};
    return mgb_cudaLaunchKernelExC(mgb_config, reinterpret_cast<const void *>(mgb_kernel),
                                   mgb_values);
  }(std::forward<mgb_ActTypes>(mgb_args)...);
}
#if CUDART_VERSION >= 12000
template <class... mgb_ActTypes>
inline cudaError_t mgb_cudaLaunchKernelEx(const cudaLaunchConfig_t *mgb_config,
                                          const cudaKernel_t mgb_kernel,
                                          mgb_ActTypes &&...mgb_args) {
  void *mgb_values[sizeof...(mgb_ActTypes) + 1] = {
      const_cast<void *>(mgb_detail::mgb_address(mgb_args))..., nullptr};
  return mgb_cudaLaunchKernelExC(mgb_config, reinterpret_cast<const void *>(mgb_kernel),
                                 mgb_values);
}
#endif
#endif
#endif /* C++11 */
#endif /* __cplusplus */

#endif /* MGB_RUNTIME_MGB_H */
