// mgb::core::Scheduler: the node scheduler's decisions, as a plain library.
//
// No gRPC, no threads, no blocking, no clock: every call that can change state takes the current
// time (`now`, microseconds on any monotonic or simulated time line) and every decision goes out
// through the EventSink, synchronously, before the call returns. mgbd wraps one Scheduler with one
// mutex; `mgb simulate` drives the same class with simulated time.
//
// How to drive it (simulator authors):
//   1. Build the GPUs (GpuSpec; LoadGpuConfig in gpu_config.h reads mgbd's --gpus JSON) and
//      Options (ParsePolicy("mgb" | "mgb-sm" | "single" | "cg:N" | "memory" | "schedgpu")), then
//      Scheduler::Create(gpus, options, &sink).
//   2. One OpenSession per process (job). TaskBegin either places the task at once
//      (BeginResult::gpu >= 0, a kTaskPlaced event was emitted) or queues it (gpu == -1): a
//      kTaskPlaced event for that task arrives later, from inside whichever call made room
//      (TaskEnd, CloseSession, CancelWaiting, ExpireDeadlines, UpdateDeviceMemory).
//   3. TaskEnd when the task's work is done; CloseSession when the job exits (it releases
//      everything the session holds or waits for, including its CUDA context reserves).
//   4. With deadlines, call ExpireDeadlines(now) at NextDeadline() (or at least before reading
//      results); expired waiters get kTaskCancelled with reason kDeadline.
// Costs: a decision is O(GPUs) (mgb-sm: O(GPUs x SMs)). After a release the queue is retried in
// FIFO order up to the first task that still cannot be placed (the head); backfilling then visits,
// through WaitingIndex, only waiting tasks whose memory fits the largest free space of a GPU open
// to them (single: a free GPU; cg:N: one with a free slot) and, under mgb-sm, whose warps fit the
// most free warps of one: a long queue that cannot fit anywhere is not walked on every event.
//
// Fairness rule (docs/service.md): the queue is FIFO. The oldest waiting task that cannot be placed
// (the head) reserves one GPU (sticky: chosen once, the one with most available memory among those
// whose capacity can ever hold it); younger tasks may be placed ahead of it on other GPUs
// (backfilling) and, under mgb and memory, on its GPU within its shadow: the memory the head will
// not need once every task older than it has ended (capacity - the head - every task placed there
// after the head began, each of their sessions and the head's with a context reserve). So the head
// waits at most for the tasks (and sessions) that were there when it began, whatever arrives after.
// Pending grows of running tasks are served before any waiting TaskBegin and ignore the reservation
// (the growing program is blocked and holds memory: making it wait behind the reservation could
// deadlock); while a grow waits on a GPU, no task is placed into the room it waits for there
// (FitsMemory counts Available less the waiting grows' extra bytes): a new task would make the
// blocked program wait longer (seen in the evaluation: a +80 GB grow waited behind two tasks
// placed after it asked).
//
// Grow liveness (docs/service.md, "Grow liveness"): a task waiting to grow holds its memory, so
// tasks on one GPU that all wait to grow can wait for each other forever. For GPU g let
//   room(g) = capacity(g) - contexts(g) x reserve - sum of reservations of tasks waiting to grow,
// the most g could offer if every task there that is not waiting to grow ended. Grows wait FIFO
// per GPU, so the oldest waiting grow decides: when room(g) is below its extra bytes every waiting
// grow on g is hopeless, and the youngest fails with RESOURCE_EXHAUSTED (kTaskCancelled, reason
// kNoRoom; synchronously when it is the grow being asked), repeated until the oldest is not
// hopeless. Checked after every event that can lower room(g): a grow queued, a context charged.
// On a GPU with NVML, once NVML was read nvml_settle_us after the GPU's last change, room(g) is
// also at most Available(g) + the reservations of the tasks not waiting to grow: memory the
// accounting does not see (contexts past the reserve, allocation rounding, other programs) can
// leave grows that fit by the accounting waiting forever (two tasks on one full GPU, each
// waiting to grow, would wait until some unrelated event failed one).
#ifndef MGB_SERVICE_CORE_MGB_CORE_SCHEDULER_H
#define MGB_SERVICE_CORE_MGB_CORE_SCHEDULER_H

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mgb/core/gpu.h"
#include "mgb/core/site_shapes.h"
#include "mgb/core/waiting_index.h"

namespace mgb::core {

using SessionId = uint64_t;
using TaskId = uint64_t;
using Micros = int64_t;  // the caller's time line; 0 in a deadline means "none"

inline constexpr uint64_t kMiB = uint64_t{1} << 20;
// CUDA context cost per process per H200 measured with nvidia-smi, with and without MPS.
inline constexpr uint64_t kDefaultContextReserve =
    528 * kMiB;  // measured 524-526 MiB per process on H200 (docs/service.md)

enum class PolicyKind {
  kMgb,        // Algorithm 3: enough memory, then fewest warps in use
  kMgbSm,      // Algorithm 2: per-SM thread-block placement; compute is hard
  kSingle,     // single assignment: a session owns one GPU from its first task to its end
  kCoreToGpu,  // cg:N: up to N sessions per GPU, round robin, memory-blind (unsafe by design)
  kMemory,     // memory only: enough memory, then most available memory
  kSchedGpu,   // schedGPU on a node: enough memory, then the lowest-numbered GPU (every job on
               // one device while they fit; the paper's neural-network baseline)
};

struct Policy {
  PolicyKind kind = PolicyKind::kMgb;
  uint32_t sessions_per_gpu = 0;  // cg:N only
  std::string Name() const;
};
// "mgb", "mgb-sm", "single", "cg:N" (N >= 1), "memory", "schedgpu"; the error lists the valid
// names.
absl::StatusOr<Policy> ParsePolicy(std::string_view name);

struct Options {
  Policy policy;
  uint64_t context_reserve_bytes = kDefaultContextReserve;
  // Grow liveness trusts NVML's free memory on a GPU only once it was read this long after the
  // GPU's last change (placement, end, grow, usage report, context): usage reports lag up to
  // 0.5 s, and a process's memory shows freed in NVML only once its teardown is done.
  Micros nvml_settle_us = 3'000'000;
  // false (default): a process's tasks go to a GPU where it has a context while one fits
  // (placement.cpp, Choose). true: every task by the policy alone, as the paper's prototype.
  bool spread_tasks = false;
  // false (default): waiting tasks in arrival order. true: by their session's queue priority
  // (OpenSession; higher first), arrival order among equals: a batch runner's order then
  // survives its jobs racing to their first task (docs/service.md, "Queue priority"). Off by
  // default since any client may ask for a high priority.
  bool queue_priority = false;
  // First runs (docs/service.md, "Programs without a learned peak"): a provisional task's memory
  // is a guess and it may grow far past it, so two growing on one GPU can together need more than
  // the GPU has, and then one of their grows fails. A provisional task is placed only on a GPU
  // where no other provisional task is still growing: one counts as growing from its placement
  // until it has allocated (a usage report or a grow; at most unknown_start_us) and then until it
  // has not grown (nor waited to grow) for unknown_settle_us. It waits while every GPU has one.
  // unknown_settle_us 0: no such rule.
  Micros unknown_settle_us = 5'000'000;
  Micros unknown_start_us = 60'000'000;
  // Interference bound (mgb policy; docs/service.md, "Co-run slowdown bound"): 0, none. Otherwise
  // a task is placed on a GPU that runs tasks only while their demand and its own (WarpsOn: the
  // share of the SMs their launches' resident blocks take) stay within (100 + this)% of the
  // GPU's warp capacity: past 100% the SMs are shared and every kernel there is predicted to
  // slow down by the excess (the simulator's model with every task busy). A GPU running no task
  // takes any task.
  uint32_t max_slowdown_percent = 0;
};

// Queue priorities run 0 (default) to kMaxQueuePriority; larger values are clamped.
inline constexpr uint32_t kMaxQueuePriority = 65535;

enum class EventKind {
  kSessionOpened,
  kSessionClosed,
  kTaskQueued,
  kTaskPlaced,
  kTaskGrown,
  kTaskEnded,
  kTaskCancelled,  // a waiting task (or a pending grow, is_grow) gave up
};

enum class CancelReason {
  kNone,
  kDeadline,
  kCancelled,
  kSessionClosed,
  kNoRoom,  // a pending grow failed because every waiting grow on its GPU was hopeless
};
// "none", "deadline", "cancelled", "session-closed", "no-room": as mgbd's log names them.
const char *CancelReasonName(CancelReason reason);

struct Event {
  EventKind kind = EventKind::kTaskQueued;
  Micros time = 0;
  SessionId session = 0;
  TaskId task = 0;
  int gpu = -1;
  uint64_t memory_bytes = 0;  // the task's reservation (after growing, for kTaskGrown)
  uint64_t warps = 0;
  bool is_grow = false;  // kTaskCancelled / kTaskQueued of a grow request
  CancelReason reason = CancelReason::kNone;
  uint64_t grow_bytes =
      0;  // a grow's extra bytes (kTaskGrown; kTaskQueued / kTaskCancelled with is_grow)
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvent(const Event &event) = 0;
};

struct TaskRequest {
  uint64_t memory_bytes = 0;
  LaunchShape shape;
  Micros deadline = 0;  // 0 = wait as long as it takes
  std::string label;
  std::string preferred_pci_bus_id;  // chosen first while it fits (see Choose); empty: none
  // The GPUs the task's process can open (CUDA_VISIBLE_DEVICES, a cgroup): it is placed only on
  // one of these. Empty: any. A GPU without a PCI bus id (a config file's) is never hidden.
  std::vector<std::string> visible_pci_bus_ids;
  // memory_bytes is mgbd's default for a program it knows nothing of (Options::unknown_settle_us).
  bool provisional = false;
  // Who asks (mgbd: the connection's user). A task without a shape takes the one learned for
  // its site (owner, session program, label: site_shapes.h); empty label: nothing learned.
  std::string owner;
};

struct BeginResult {
  TaskId task = 0;
  int gpu = -1;  // -1: queued, a kTaskPlaced (or kTaskCancelled) event follows later
};

struct GrowResult {
  bool grown = false;         // false: queued, a kTaskGrown (or kTaskCancelled) event follows
  uint64_t memory_bytes = 0;  // the reservation now
  int gpu = -1;               // the task's GPU
};

struct GpuSnapshot {
  GpuSpec spec;
  uint64_t memory_reserved = 0;  // task reservations plus context reserves
  uint64_t memory_used = 0;      // NVML's used bytes; for config GPUs, memory_reserved
  uint64_t memory_available = 0;
  uint64_t warps_in_use = 0;
  uint32_t tasks = 0;
  uint32_t sessions = 0;  // sessions charged a context reserve here
};

struct TaskSnapshot {
  TaskId task = 0;
  SessionId session = 0;
  int64_t pid = 0;
  std::string program;
  std::string label;
  uint64_t memory_bytes = 0;
  uint64_t warps = 0;
  int gpu = -1;
  Micros since = 0;
  uint64_t allocated_bytes = 0;  // as last reported through TaskUsage (0: never reported)
};

struct Snapshot {
  std::string policy;
  std::vector<GpuSnapshot> gpus;
  std::vector<TaskSnapshot> running;
  std::vector<TaskSnapshot> waiting;  // queue order
  uint32_t sessions = 0;
  uint64_t decisions = 0;
};

class Scheduler {
 public:
  // Fails on no GPUs, a GPU with zero memory or SMs, or zero per-SM limits.
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(std::vector<GpuSpec> gpus,
                                                           Options options, EventSink *sink);
  ~Scheduler();

  // queue_priority orders the session's waiting tasks when Options::queue_priority is on.
  SessionId OpenSession(int64_t pid, std::string program, Micros now, uint32_t queue_priority = 0);
  // Ends every task of the session, cancels its waiters and grows, frees its context reserves.
  absl::Status CloseSession(SessionId session, Micros now);

  // Errors (state unchanged): INVALID_ARGUMENT naming the field (zero shape, memory above every
  // GPU's capacity, a block no SM can hold under mgb-sm), NOT_FOUND for an unknown session.
  absl::StatusOr<BeginResult> TaskBegin(SessionId session, const TaskRequest &request, Micros now);
  // A task the session's process held on `gpu` under an mgbd that went away: placed there at
  // once (its memory is in use). INVALID_ARGUMENT for a GPU not in the inventory or a request
  // that does not validate; RESOURCE_EXHAUSTED (kNoRoom) past the GPU's capacity.
  absl::StatusOr<TaskId> RestoreTask(SessionId session, int gpu, const TaskRequest &request,
                                     Micros now);
  // Until `until`, new tasks wait (after a restart, restored tasks come back first); the wait
  // ends through ExpireDeadlines (NextDeadline names it).
  void HoldNewTasksUntil(Micros until) { hold_until_ = until; }
  // Errors: INVALID_ARGUMENT when the reservation plus extra_bytes (plus the session's context
  // reserve, memory-aware policies) exceeds the GPU's capacity; RESOURCE_EXHAUSTED when waiting
  // would make every waiting grow on the GPU hopeless and this grow does not fit now (see the top).
  absl::StatusOr<GrowResult> TaskGrow(SessionId session, TaskId task, uint64_t extra_bytes,
                                      Micros deadline, Micros now);
  // The task really allocated `allocated_bytes` of its reservation so far (NVML accounting).
  // Returns whether that changed the GPU's memory (other bytes, or the process's context now
  // confirmed): only then is NVML's view worth reading again.
  absl::StatusOr<bool> TaskUsage(SessionId session, TaskId task, uint64_t allocated_bytes,
                                 Micros now);
  // The most a running task could hold on its GPU now: its reservation plus the room no task,
  // context or waiting grow there has a claim on (and NVML does not show used by others).
  absl::StatusOr<uint64_t> TaskRoom(SessionId session, TaskId task) const;
  // A running task launched `shape`: when it demands more of the GPU than the task's shape
  // (WarpsOn: the share of the SMs its resident blocks take), the task counts it from now on
  // (mgb-sm: fitted to the SMs' room if it fits, else counted over the GPU's warps only, so later
  // tasks wait). Returns the warps the task counts.
  absl::StatusOr<uint64_t> TaskLaunch(SessionId session, TaskId task, const LaunchShape &shape);
  // Releases a running task, or withdraws a waiting one.
  absl::Status TaskEnd(SessionId session, TaskId task, Micros now);
  // Withdraws a waiting TaskBegin (or the task's pending grow when is_grow); NOT_FOUND if there is
  // none (for instance because it was placed a moment ago).
  absl::Status CancelWaiting(SessionId session, TaskId task, bool is_grow, CancelReason reason,
                             Micros now);

  void ExpireDeadlines(Micros now);
  // The status a parked TaskBegin / TaskGrow ends with for a kTaskCancelled event:
  // DEADLINE_EXCEEDED, CANCELLED, or RESOURCE_EXHAUSTED (kNoRoom) naming the task, the GPU and the
  // bytes.
  absl::Status CancelStatus(const Event &event) const;
  std::optional<Micros> NextDeadline() const;

  // NVML's view of an NVML GPU (ignored for config GPUs); retries waiting tasks.
  void UpdateDeviceMemory(int gpu, uint64_t free_bytes, uint64_t used_bytes, Micros now);

  Snapshot Status() const;
  const GpuSpec &gpu(int index) const { return gpus_[index].spec; }
  int gpu_count() const { return static_cast<int>(gpus_.size()); }
  const Policy &policy() const { return options_.policy; }
  uint64_t context_reserve_bytes() const { return options_.context_reserve_bytes; }
  size_t waiting_count() const { return waiting_.size(); }
  size_t growing_count() const { return growing_.size(); }
  size_t running_count() const { return tasks_.size() - waiting_.size(); }
  uint64_t decisions() const { return decisions_; }

 private:
  struct SmUse {
    uint32_t blocks = 0, warps = 0, registers = 0, shared_bytes = 0;
  };
  struct SmTotal {
    uint64_t blocks = 0, warps = 0, registers = 0, shared_bytes = 0;
  };
  struct GpuState {
    GpuSpec spec;
    uint64_t reserved = 0;          // sum of task reservations
    uint32_t contexts = 0;          // sessions charged a context reserve here
    uint32_t pending_contexts = 0;  // of those, with no usage report yet (not in NVML's view)
    uint64_t unallocated = 0;       // sum over tasks of max(0, reservation - reported allocated)
    uint64_t growing_extra = 0;     // the extra bytes of the grows waiting here
    uint64_t nvml_free = 0, nvml_used = 0;
    Micros nvml_read = 0;    // when nvml_free was read
    Micros last_change = 0;  // last placement, end, grow, usage report or context here
    uint64_t warps = 0;
    uint32_t tasks = 0;
    uint32_t pinned_sessions = 0;       // single / cg:N
    uint32_t unsettled = 0;             // provisional tasks here still growing (first_runs.cpp)
    std::map<uint64_t, TaskId> placed;  // the tasks placed here, by Task::order
    std::vector<SmUse> sm_use;          // mgb-sm only
    uint32_t next_sm = 0;               // mgb-sm round robin start
    SmTotal sm_total;                   // mgb-sm: sm_use summed (an O(1) bound on the room left)
  };
  enum class ContextState : uint8_t { kNone, kCharged, kConfirmed };
  struct Session {
    int64_t pid = 0;
    std::string program;
    std::vector<ContextState> context;  // per GPU
    int pinned_gpu = -1;                // single / cg:N
    std::set<TaskId> tasks;
    uint32_t queue_priority = 0;  // used only under Options::queue_priority
  };
  struct Task {
    SessionId session = 0;
    uint64_t memory = 0;
    uint64_t allocated = 0;
    uint64_t warps = 0;  // as charged on its GPU
    LaunchShape shape;
    std::string label;
    std::string site;  // SiteShapes key; empty: learns nothing
    int gpu = -1;
    Micros since = 0;
    Micros deadline = 0;
    uint64_t order = 0;        // QueueKey at TaskBegin: its place in queue order, waiting or not
    uint64_t queue_seq = 0;    // = order while it waits, 0 otherwise
    int reserved_gpu = -1;     // sticky reservation while it is the blocked queue head
    int preferred_gpu = -1;    // TaskRequest::preferred_pci_bus_id's GPU, -1 if none
    std::vector<bool> hidden;  // per GPU: not in TaskRequest::visible_pci_bus_ids; empty: none
    uint64_t min_warps = 0;    // mgb-sm: the fewest warps it needs free on any GPU (0 otherwise)
    std::vector<uint16_t> sm_blocks;  // mgb-sm: blocks placed per SM
    uint64_t grow_extra = 0;          // > 0 while a grow waits
    Micros grow_deadline = 0;
    uint64_t grow_seq = 0;
    bool provisional = false;    // TaskRequest::provisional
    bool allocating = false;     // it reported memory allocated, or grew
    Micros unsettled_until = 0;  // > 0 while it counts as growing (in unsettled_)
  };
  struct Fit {
    int gpu = -1;
    std::vector<uint16_t> sm_blocks;
  };

  Scheduler(std::vector<GpuSpec> gpus, Options options, EventSink *sink);

  // hidden: HiddenGpus(request), which TaskFrom keeps in the task.
  absl::Status ValidateRequest(const TaskRequest &request, const std::vector<bool> &hidden) const;
  // Per GPU, whether the request's process cannot open it (TaskRequest::visible_pci_bus_ids);
  // empty when it names none.
  std::vector<bool> HiddenGpus(const TaskRequest &request) const;
  static bool Hidden(const Task &t, int gpu) { return !t.hidden.empty() && t.hidden[gpu]; }
  // Never placed on `gpu` now, by any rule: hidden from its process, or a provisional task where
  // another is still growing (first_runs.cpp). Choose and the head's shadow both ask.
  bool Closed(const Task &t, int gpu) const {
    return Hidden(t, gpu) || (t.provisional && gpus_[gpu].unsettled > 0);
  }
  absl::StatusOr<Task *> OwnedTask(SessionId session, TaskId task, std::string_view field);
  // OwnedTask, and FAILED_PRECONDITION while it waits for a GPU (grow, usage, launch need one).
  absl::StatusOr<Task *> PlacedTask(SessionId session, TaskId task);

  uint64_t Available(const GpuState &g) const;
  // What a task may be placed into: Available less the grows waiting there, which go first.
  uint64_t RoomForTasks(const GpuState &g) const;
  uint64_t Needed(const Session &s, int gpu, uint64_t memory) const;
  // A launch's demand in warps of g's capacity: the share of the SMs its resident blocks take,
  // registers and shared memory included (accounting.cpp).
  uint64_t WarpsOn(const GpuState &g, const LaunchShape &shape) const;
  // Options::max_slowdown_percent: the demand g's tasks may reach together (UINT64_MAX: no
  // bound), and whether g takes t now (a GPU running no task takes any).
  uint64_t DemandLimit(const GpuState &g) const;
  bool AdmitsDemand(const GpuState &g, const Task &t) const;
  bool BoundsDemand() const {
    return options_.policy.kind == PolicyKind::kMgb && options_.max_slowdown_percent > 0;
  }
  // The most demand (mgb-sm: warps) a waiting task may have to be placed on g now.
  uint64_t WarpRoom(const GpuState &g) const;
  // The GPU the policy picks for the task among those not excluded, or gpu -1.
  Fit Choose(const Session &s, const Task &t, const std::vector<bool> &excluded) const;
  // Memory-aware policies choose among the GPUs where the session already has a context first
  // (ChooseAmong with only those), and among all of them only when none of those fits.
  Fit ChooseAmong(const Session &s, const Task &t, const std::vector<bool> &excluded) const;
  bool FitsMemory(const Session &s, int gpu, uint64_t memory) const;
  // Whether seating a new context of `s` on `gpu` keeps every waiting task placeable (the
  // context rule in scheduler.cpp); true when `s` already has a context there.
  bool ContextAdmissible(const Session &s, int gpu) const;
  // mgb-sm: blocks per SM for the task on g in hardware round-robin order, or none if they
  // do not all fit (a grid larger than the GPU holds at once counts as one full wave).
  std::optional<std::vector<uint16_t>> FitSms(const GpuState &g, const LaunchShape &shape) const;
  static uint32_t BlocksPerEmptySm(const GpuSpec &spec, const LaunchShape &shape);
  static bool LessLoaded(const GpuState &a, const GpuState &b);
  int ChooseReservation(const Task &t) const;
  // Backfilling bound for tasks of sessions without a GPU of their own: the most memory and warps
  // one GPU not excluded and open to them has free ({0, 0} and open == false if there is none).
  struct OpenRoom {
    bool open = false;
    WaitingIndex::Keys limits{};
  };
  // Shadow backfilling (mgb, memory; see the top): what the head's reserved GPU must hold once
  // every task older than the head has ended. gpu -1: no younger task may go there.
  struct Shadow {
    int gpu = -1;
    uint64_t capacity = 0;
    uint64_t held = 0;                // the head's and its jumpers' memory and context reserves
    uint64_t demand = 0;              // their demand (WarpsOn), under max_slowdown_percent
    std::vector<SessionId> sessions;  // charged a context reserve in `held` (the head's first)
  };
  Shadow ShadowOfHead() const;
  uint64_t ShadowCost(const Shadow &shadow, const Task &t) const;
  // Choose among the GPUs not excluded, else the head's GPU if the task fits its shadow.
  Fit ChooseBehindHead(const Session &s, const Task &t, const std::vector<bool> &excluded,
                       const Shadow &shadow) const;
  void TakeShadow(Shadow &shadow, const Task &t) const;
  OpenRoom RoomForUnpinned(const std::vector<bool> &excluded, const Shadow &shadow) const;
  uint64_t MinWarps(const LaunchShape &shape) const;
  uint64_t MinDemand(const LaunchShape &shape) const;  // the least WarpsOn over the GPUs

  // A task as a request describes it (its preferred GPU found), not yet stored or placed.
  Task TaskFrom(SessionId session, const TaskRequest &request, Micros now) const;
  // Stores t under a new id among the session's tasks; returns the id.
  TaskId AddTask(Session &s, Task t);
  void Place(TaskId id, Task &t, Fit fit, Micros now);
  static absl::Status ValidateShape(const LaunchShape &shape);
  // mgb-sm's per-SM accounting of a placed task: charge its blocks per SM, or give them back.
  void ChargeSms(GpuState &g, Task &t, std::vector<uint16_t> sm_blocks);
  void ReleaseSms(GpuState &g, Task &t);
  // Adds (charge) or takes back a task's blocks in the per-SM use and its totals; returns them.
  static uint64_t CountSms(GpuState &g, const LaunchShape &shape,
                           const std::vector<uint16_t> &sm_blocks, bool charge);
  void Release(Task &t);
  void Withdraw(TaskId id, Task &t, CancelReason reason, Micros now);
  void Enqueue(TaskId id, Task &t);
  // A task's order: arrival order, led by the session's priority when that is on.
  uint64_t QueueKey(const Session &s);
  void Dequeue(TaskId id, Task &t);
  void DropGrow(TaskId id, Task &t);
  void ChargeContext(Session &s, int gpu);
  void RetryWaiting(Micros now);
  void RetryGrows(Micros now);
  void PlaceWaitingTasks(Micros now);
  void ApplyGrow(TaskId id, Task &t, uint64_t extra, Micros now);
  // Grow liveness (see the top). The pending grows on one GPU, FIFO.
  struct GrowQueue {
    uint64_t held = 0;          // reservations of the tasks waiting to grow
    uint64_t oldest_extra = 0;  // the oldest pending grow's extra bytes; 0: none pending
    TaskId youngest = 0;
  };
  std::vector<GrowQueue> GrowQueues() const;
  uint64_t RoomForGrows(int gpu, uint64_t held) const;
  void FailHopelessGrows(Micros now);
  // First runs (Options::unknown_settle_us): a provisional task counts as growing on its GPU from
  // its placement or grow until it has been quiet for the settle time.
  void MarkGrowing(TaskId id, Task &t, Micros now);
  void GrowingUntil(TaskId id, Task &t, Micros until);
  void ForgetGrowing(TaskId id, Task &t);
  // Settles the tasks quiet long enough; true when some GPU has no growing one any more.
  bool SettleQuietTasks(Micros now);
  std::string NoRoomMessage(TaskId id, int gpu, uint64_t memory, uint64_t extra) const;
  // The oldest waiting task after `after_seq` that may fit (pinned sessions' tasks always
  // qualify, their Choose is O(1)); false when none.
  bool NextCandidate(uint64_t after_seq, const OpenRoom &room, WaitingIndex::Entry &next) const;
  void Emit(Event event);
  Event TaskEvent(EventKind kind, TaskId id, const Task &t, Micros now) const;
  Event GrowEvent(EventKind kind, TaskId id, const Task &t, Micros now) const;  // its pending grow

  std::vector<GpuState> gpus_;
  Options options_;
  EventSink *sink_;
  std::unordered_map<SessionId, Session> sessions_;
  std::unordered_map<TaskId, Task> tasks_;  // running and waiting
  std::map<uint64_t, TaskId> waiting_;      // by queue_seq: QueueKey's order
  // waiting_ split in two for backfilling: tasks of sessions that own a GPU (single / cg:N) go
  // only there, FIFO; the others are indexed by memory and (mgb-sm) warps.
  std::map<uint64_t, TaskId> waiting_pinned_;
  WaitingIndex waiting_index_;
  SiteShapes site_shapes_;
  mutable std::vector<uint32_t> room_scratch_;     // FitSms: room per SM, reused (no allocation)
  std::map<uint64_t, TaskId> growing_;             // pending grows, FIFO
  std::set<std::pair<Micros, TaskId>> deadlines_;  // waiting TaskBegins
  std::set<std::pair<Micros, TaskId>> grow_deadlines_;  // pending grows
  std::set<std::pair<Micros, TaskId>> unsettled_;       // provisional tasks still growing
  int head_gpu_ = -1;      // the GPU reserved by the blocked queue head, -1 if none
  TaskId head_task_ = 0;   // the blocked queue head, 0 if none
  Micros hold_until_ = 0;  // new tasks wait until then (HoldNewTasksUntil), 0 if not held
  uint64_t max_capacity_ = 0;
  uint32_t cg_next_ = 0;
  uint64_t next_seq_ = 1;
  SessionId next_session_ = 1;
  TaskId next_task_ = 1;
  uint64_t decisions_ = 0;
};

}  // namespace mgb::core

#endif  // MGB_SERVICE_CORE_MGB_CORE_SCHEDULER_H
