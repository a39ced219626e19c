// Runtime: everything behind the C API of mgb.h, for one CudaApi and one mgbd session. The C API
// forwards to Runtime::Global(); tests build their own Runtime over a fake CudaApi.
//
// Locking: mu_ guards every table and is never held across an mgbd call or a CUDA call that can
// wait for the device. A stand-in being bound is in state kBinding: other threads touching it wait
// on objects_cv_. Lazy placements (bind_mu_) are serialised within a process; static tasks on
// different threads are not.
#ifndef MGB_RUNTIME_SRC_RUNTIME_H
#define MGB_RUNTIME_SRC_RUNTIME_H

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cuda_api.h"
#include "lazy_state.h"
#include "mgb/client.h"
#include "mgb/mgb.h"
#include "session.h"
#include "standin_arena.h"
#include "usage_reporter.h"
#include "wait_clock.h"

namespace mgb::runtime {

inline constexpr size_t kDefaultHeapBytes = size_t{8} << 20;  // CUDA's default malloc heap

class Runtime {
 public:
  Runtime(CudaApi &api, SessionConfig config);
  ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  // The process-wide runtime of the C API: DefaultCudaApi() and the environment's configuration;
  // its session ends at exit.
  static Runtime &Global();

  // ---- task probes
  mgb_task TaskBegin(size_t memory_bytes, mgb_dim3 grid, mgb_dim3 block, const void *kernel,
                     const char *site);
  void TaskEnd(mgb_task task);
  // Waits until mgbd has every release sent so far (TaskEnd does not wait for mgbd's answer).
  void FlushReleases();

  // ---- memory
  cudaError_t Malloc(void **ptr, size_t bytes);
  cudaError_t MallocPitch(void **ptr, size_t *pitch, size_t width, size_t height);
  cudaError_t MallocManaged(void **ptr, size_t bytes, unsigned int flags);
  cudaError_t Free(void *ptr);
  cudaError_t Memcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind,
                     std::optional<cudaStream_t> stream);
  // A peer copy names the program's devices, but mgbd chose where the memory lives (its two
  // "devices" may be one GPU): the copy goes by the unified addresses, after CUDA's own check of
  // the device numbers.
  cudaError_t MemcpyPeer(void *dst, int dst_device, const void *src, int src_device, size_t count,
                         std::optional<cudaStream_t> stream);
  cudaError_t Memcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                       size_t height, cudaMemcpyKind kind);
  cudaError_t Memset(void *ptr, int value, size_t count, std::optional<cudaStream_t> stream);
  cudaError_t MemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                             cudaMemcpyKind kind);
  cudaError_t MemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                               cudaMemcpyKind kind);

  // ---- streams and events (stand-in handles)
  cudaError_t StreamCreate(cudaStream_t *stream, unsigned int flags);
  cudaError_t StreamDestroy(cudaStream_t stream);
  cudaError_t StreamSynchronize(cudaStream_t stream);
  cudaError_t StreamQuery(cudaStream_t stream);
  cudaError_t StreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
  cudaError_t EventCreate(cudaEvent_t *event, unsigned int flags);
  cudaError_t EventRecord(cudaEvent_t event, cudaStream_t stream);
  cudaError_t EventSynchronize(cudaEvent_t event);
  cudaError_t EventQuery(cudaEvent_t event);
  cudaError_t EventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
  cudaError_t EventDestroy(cudaEvent_t event);
  cudaStream_t RealStream(cudaStream_t stream);

  // ---- device
  cudaError_t DeviceSetLimit(cudaLimit limit, size_t value);
  cudaError_t LimitRefusal(cudaLimit limit);
  // Peer access is a property of the program's own devices (CUDA's numbering): made from the
  // device the program set, whichever GPU libmgb made current for its tasks.
  cudaError_t DeviceEnablePeerAccess(int peer, unsigned int flags);
  cudaError_t DeviceDisablePeerAccess(int peer);
  cudaError_t SetDevice(int device);
  // The device the program chose (cudaSetDevice), not the one mgbd placed its work on.
  cudaError_t GetDevice(int *device);
  cudaError_t DeviceSynchronize();

  // ---- launches
  cudaError_t LaunchPrepare(mgb_dim3 grid, mgb_dim3 block, const void *kernel, const char *site,
                            int nargs, const void *const *args, const size_t *arg_sizes);
  cudaError_t LaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                           size_t shared_bytes, cudaStream_t stream);
  cudaError_t LaunchCooperativeKernel(const void *func, dim3 grid, dim3 block, void **args,
                                      size_t shared_bytes, cudaStream_t stream);
  // cudaLaunchKernelExC: as LaunchKernel, with the config's stand-in stream and the events its
  // attributes name made real.
  cudaError_t LaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args);
  void *RealPtr(const void *ptr);
  void TranslateWords(void *bytes, size_t size);
  // LaunchPrepare for the argument values of a launch by kernel address (cudaLaunchKernel's
  // form), with the kernel's parameter sizes from CUDA.
  cudaError_t PrepareArgs(const void *func, dim3 grid, dim3 block, void **args, const char *site);
  // Before a call into code mgb cannot see (a CUDA library): binds the stand-ins among
  // pointers[0..n) to one task and makes its GPU current (a launch of one thread, no kernel).
  cudaError_t PreparePointers(const char *site, int n, const void *const *pointers);

  // ---- CUDA graphs (runtime_graphs.cpp): a captured graph belongs to the task of its memory
  cudaError_t StreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode);
  cudaError_t StreamEndCapture(cudaStream_t stream, cudaGraph_t *graph);
  cudaError_t GraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags);
  cudaError_t GraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);

  // ---- eager binding (runtime_eager.cpp): the program holds code mgb cannot see (a translation
  // unit compiled as written), so no stand-in may be handed out from now on: every allocation is
  // real at once, and all of them, with every static task, share one task on one GPU.
  void NoteUnseenCode(const char *file);
  // For the process-wide runtime (mgb_note_unseen_code): safe from static constructors of the
  // program, before any runtime exists (it only sets a flag every runtime reads).
  static void NoteUnseenCodeInProcess();
  bool Eager() const;

  // Ends every task still open and the session (at exit, or when a test's runtime goes).
  void Shutdown();

  // ---- introspection for tests and benchmarks
  // An address libmgb handed out: device memory of the lazy layer (real, mapped or not yet) or a
  // stream/event handle.
  bool IsStandIn(const void *ptr) const {
    auto address = reinterpret_cast<uintptr_t>(ptr);
    return memory_.Contains(address) || handle_addresses_.Contains(address);
  }
  bool IsLazyMemory(const void *ptr) const {
    return memory_.Contains(reinterpret_cast<uintptr_t>(ptr));
  }
  bool Managed() { return session_.Managed(); }
  // The task a bound stand-in belongs to (0 if unbound or not a stand-in).
  uint64_t TaskOf(const void *standin);
  // The device of an open task, or -1.
  int DeviceOfTask(uint64_t task_id);
  uint64_t ReservedBytes(uint64_t task_id);
  size_t OpenTasks();
  // Time blocked on mgbd so far (printed at Shutdown as MGB_WAIT_MS).
  const WaitClock &Waits() const { return waits_; }

 private:
  struct ThreadState {
    std::vector<uint64_t> stack;  // static tasks begun on this thread, innermost last
    uint64_t last_prepared = 0;   // the lazy task of this thread's latest prepared launch
    int placed_device = -1;       // the GPU mgbd last gave this thread (-1: none yet)
    std::vector<cudaEvent_t> pending_records;  // stand-in events recorded before that
    int captures = 0;                          // stream captures under way on this thread
    int capture_device = -1;                   // the GPU they capture on
    int program_device = 0;  // what the program set with cudaSetDevice (CUDA's default: 0)
  };
  struct Resolved {
    LazyObject *object = nullptr;
    size_t offset = 0;
  };

  ThreadState &Thread();
  uint64_t CurrentTaskId();  // innermost static task of this thread, or 0

  // Tasks and the guard (runtime_tasks.cpp).
  // library_call: the task is a CUDA library's (no kernel of its own: mgb_task_begin or
  // mgb_prepare with a null kernel). The process's first such task is asked for the device
  // current now, where a handle the program made before it lives.
  uint64_t StartTask(uint64_t bytes, const LaunchShape &shape, const std::string &site, bool lazy,
                     bool library_call = false);
  // A launch of a running task: tells mgbd when it is wider than any it was told of (a task
  // placed before its first launch began with no shape).
  void TellLaunch(uint64_t task_id, const LaunchShape &shape);
  void FinishTask(uint64_t task_id);
  // Makes room for `bytes` more in the task, growing its reservation through mgbd when needed.
  enum class Reserve { kDone, kRefused, kUnmanaged };
  // kRefused: mgbd can never grow it (RESOURCE_EXHAUSTED, INVALID_ARGUMENT); the caller's
  // allocation fails like CUDA's out-of-memory. Only when allocation_may_fail; otherwise, and on
  // any other failure, the session fails (exit, or unmanaged with MGB_UNMANAGED): kUnmanaged.
  Reserve ReserveInTask(uint64_t task_id, uint64_t bytes, bool allocation_may_fail = false);
  void CommitInTask(uint64_t task_id, uint64_t reserved_bytes, uint64_t allocated_bytes);
  void ReleaseFromTask(uint64_t task_id, uint64_t bytes);
  void PrepareDevice(int device);
  cudaError_t GuardedMalloc(uint64_t task_id, void **ptr, size_t bytes);
  cudaError_t ReleaseReal(void *ptr);
  LaunchShape ShapeOf(mgb_dim3 grid, mgb_dim3 block, const void *kernel);
  // SHAPE with KERNEL's registers and shared memory where they are not known yet (and can be).
  LaunchShape WithResources(LaunchShape shape, const void *kernel);
  std::string Describe(uint64_t task_id);

  // The lazy layer (runtime_lazy.cpp). Functions ending in Locked need mu_ held.
  Resolved ResolveLocked(std::unique_lock<std::mutex> &lock, const void *ptr);
  // nullptr when the address range is exhausted.
  LazyObject *NewObjectLocked(size_t bytes);

  // Spans (runtime_spans.cpp): the pieces of the reserved device range that get mapped.
  // Whether lazy addresses can be handed out at all (CUDA's virtual memory management works);
  // when not, the process binds eagerly from now on and says so once (MGB_TRACE).
  bool LazyAddressesAvailable();
  // The span a new object of `bytes` goes into (packed into this thread's open span when small).
  AddressSpan *SpanForLocked(size_t bytes, size_t *offset);
  // Takes no more small allocations into `span` (it is bound, or going).
  void CloseSpanLocked(AddressSpan *span);
  // The objects on `span` (its base up to its end), in address order.
  std::vector<LazyObject *> ObjectsOnLocked(const AddressSpan &span);
  // Removes `object`; when it was the last on its span, the span is removed too and returned for
  // DisposeSpan (its memory is unmapped outside mu_).
  std::optional<AddressSpan> ForgetObjectLocked(LazyObject *object);
  // Waits for the span's GPU, unmaps and releases its memory (uncounting it from its task) and
  // gives its addresses back.
  void DisposeSpan(const AddressSpan &span);
  // Backs `span` with memory on `device` (counted in task_id by the caller).
  cudaError_t MapSpan(AddressSpan *span, int device, uint64_t task_id);
  // Moves a mapped span's memory to `device`, the data kept, the addresses unchanged.
  cudaError_t RemapSpan(AddressSpan *span, int device);
  // Whether `bytes` more of captured host data stays within the configured limit.
  bool MayCaptureLocked(size_t bytes) const;
  void RecordLocked(std::shared_ptr<LazyOp> op);
  void DropIfDeadLocked(LazyObject *object);
  // Binds the stand-ins (and every one their pending ops reach) to one task, placing a lazy task
  // when none is given or current, replays their recorded ops and makes its GPU current.
  cudaError_t Bind(std::vector<uintptr_t> standins, const LaunchShape &shape,
                   const std::string &site, uint64_t preferred_task, bool library_call = false,
                   const void *kernel = nullptr);
  cudaError_t Materialize(uint64_t task_id, const std::vector<LazyObject *> &fresh,
                          const std::vector<std::shared_ptr<LazyOp>> &ops);
  cudaError_t Migrate(LazyObject *object, uint64_t task_id);
  // The real address of a bound stand-in address; nullopt while it is unbound or unknown.
  std::optional<uintptr_t> TranslateLocked(uintptr_t address);
  // The task owning a real device address libmgb allocated (0: none or unknown).
  uint64_t RealOwnerLocked(uintptr_t address) const;
  // Runs `call` with stand-ins in `pointers` bound and translated, on their task's device.
  cudaError_t WithRealPointers(
      std::vector<const void *> pointers, const std::string &what,
      const std::function<cudaError_t(const std::vector<void *> &, int)> &call);
  const std::vector<size_t> &ParamSizes(const void *func);
  // A kernel's registers per thread and static shared memory: fixed by its compiled code, so
  // asked of CUDA once per kernel, not at every launch of a lazy loop.
  struct KernelResources {
    uint32_t registers_per_thread = 0;
    uint32_t shared_bytes_per_block = 0;
  };
  KernelResources ResourcesOf(const void *kernel);
  std::vector<uintptr_t> StandInsIn(const void *bytes, size_t size) const;
  // Host bytes about to be copied straight into device memory: every unbound lazy address among
  // them is bound (to `preferred` when it is a task), as a host array of device pointers copied
  // to the device (a batched library call's pointer array) must point at mapped memory.
  void BindAddressesIn(const void *src, size_t count, uint64_t preferred);
  // The GPU of the task owning a real device address among the words of args (-1: none).
  int DeviceOfRealWords(int nargs, const void *const *args, const size_t *arg_sizes);

  // Eager binding: the task every allocation and static task of the process joins (started by
  // the first of them, `bytes` its memory). 0 when mgbd placed nothing (unmanaged).
  uint64_t ProcessTask(uint64_t bytes, const LaunchShape &shape, const std::string &site);
  // The task an allocation made now belongs to: this thread's static task, else under eager
  // binding the process task (its GPU made current), else 0 (a stand-in is handed out).
  uint64_t AllocationTask(uint64_t bytes);
  // The process task, started if needed, its GPU made current (eager binding, and managed
  // memory allocated outside any task).
  uint64_t EagerTask(uint64_t bytes, const std::string &site);
  // An allocation that keeps its task open until it is freed: under eager binding, or `always`.
  void HoldTask(void *real, bool always = false);

  // Streams and events (runtime_streams.cpp).
  LazyHandle *HandleLocked(const void *handle);
  void *RealHandle(const void *handle, int device);
  // The real stream for `stream` (maybe a stand-in) on `device`.
  cudaStream_t StreamOn(cudaStream_t stream, int device);
  std::optional<cudaEvent_t> RecordedEvent(cudaEvent_t event);
  cudaError_t RecordOn(cudaEvent_t event, cudaStream_t stream, int device);
  // The thread got `device` from mgbd: deferred event records happen there now.
  void PlacedOn(int device);
  int CurrentDevice();
  // Runs a CUDA call with the program's chosen device current, then makes libmgb's current again.
  cudaError_t OnProgramDevice(const std::function<cudaError_t()> &call);
  // CUDA's number for the GPU on PCI bus `bus_id`, and CUDA's device count. Fixed for the
  // process, so asked of the driver once (a failure is returned and asked again next time), not
  // at every task or cudaSetDevice (runtime_tasks.cpp).
  cudaError_t DeviceByBusId(const std::string &bus_id, int *device);
  cudaError_t DeviceCount(int *count);
  // cudaErrorInvalidDevice for a number outside CUDA's devices, as CUDA answers it.
  cudaError_t CheckDevice(int device);
  // Tells a new client the PCI bus ids of the GPUs this process can open (CUDA_VISIBLE_DEVICES, a
  // cgroup), so that mgbd never places a task on one it cannot (under `mgb run` on a node of
  // several GPUs, say). Nothing when CUDA cannot list them: mgbd then chooses among all.
  void TellVisibleGpus(Client &client);

  const uint64_t id_;  // keys this runtime's per-thread state (an address could be reused)
  CudaApi &api_;
  Session session_;
  StandInArena memory_;  // device addresses (CUDA virtual memory management): objects' spans
  StandInArena handle_addresses_;  // host addresses (PROT_NONE): stand-in streams and events

  std::mutex bind_mu_;
  std::mutex mu_;
  std::condition_variable objects_cv_;
  std::map<uint64_t, std::unique_ptr<Task>> tasks_;
  std::map<uintptr_t, std::unique_ptr<LazyObject>> objects_;  // by base
  std::map<uintptr_t, std::unique_ptr<AddressSpan>> spans_;   // by base
  std::map<std::thread::id, AddressSpan *> open_spans_;       // each thread's packing span
  std::map<uintptr_t, RealAllocation> reals_;                 // by real base
  std::map<uintptr_t, std::unique_ptr<LazyHandle>> handles_;
  std::map<const void *, std::vector<size_t>> param_sizes_;  // kernel -> parameter sizes
  std::map<const void *, KernelResources> kernel_resources_;
  uint64_t next_seq_ = 1;
  size_t captured_bytes_ = 0;  // host bytes held by pending copies (bounded by the config's limit)

  // Device setup shared by all tasks: limits and __constant__ data, applied to every device a task
  // lands on (device_mu_ guards these; it may be held across the CUDA calls that apply them).
  std::mutex device_mu_;
  std::set<int> prepared_devices_;
  std::map<cudaLimit, size_t> limits_;
  struct SymbolWrite {
    const void *symbol;
    size_t offset;
    std::vector<unsigned char> bytes;
  };
  std::vector<SymbolWrite> symbol_writes_;  // in call order; a write hides older ones it covers
  size_t heap_bytes_ = kDefaultHeapBytes;
  std::map<std::string, int> device_by_bus_;  // DeviceByBusId's answers (device_mu_)
  int device_count_ = -1;                     // DeviceCount's answer once known (device_mu_)
  std::optional<std::vector<std::string>> visible_bus_ids_;  // TellVisibleGpus's (device_mu_)
  const Client *told_visible_ = nullptr;                     // the client told last (device_mu_)

  // CUDA graphs: the GPU each captured graph and each instantiated graph lives on (mu_).
  std::map<const void *, int> graph_devices_;
  std::map<const void *, int> exec_devices_;

  // Eager binding (runtime_eager.cpp).
  std::atomic<bool> eager_{false};
  std::atomic<bool> placed_any_{false};  // a task of this process was placed (StartTask)
  static std::atomic<const Runtime *> process_runtime_;  // Global()'s, once made
  std::mutex process_task_mu_;  // held while the process task is started (an mgbd call)
  uint64_t process_task_ = 0;   // (mu_)

  WaitClock waits_;
  std::atomic<bool> waits_printed_{false};

  UsageReporter usage_{[this] { return session_.client(); }};  // last: stops first
};

}  // namespace mgb::runtime

#endif  // MGB_RUNTIME_SRC_RUNTIME_H
