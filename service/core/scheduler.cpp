// Scheduler state changes: sessions and tasks (the accounting behind Available() is
// accounting.cpp). Which GPU a task gets is decided in placement.cpp, the wait queue (backfill and
// the head's shadow) is wait_queue.cpp, grow liveness grow_liveness.cpp.
#include "mgb/core/scheduler.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "mgb/core/error_reason.h"
#include "saturating.h"

namespace mgb::core {

const char *CancelReasonName(CancelReason reason) {
  switch (reason) {
    case CancelReason::kNone: return "none";
    case CancelReason::kDeadline: return "deadline";
    case CancelReason::kCancelled: return "cancelled";
    case CancelReason::kSessionClosed: return "session-closed";
    case CancelReason::kNoRoom: return "no-room";
  }
  return "unknown";
}
absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(std::vector<GpuSpec> gpus,
                                                             Options options, EventSink *sink) {
  if (gpus.empty()) return absl::InvalidArgumentError("gpus: at least one GPU is needed");
  for (size_t i = 0; i < gpus.size(); ++i) {
    const GpuSpec &g = gpus[i];
    const std::string where = absl::StrCat("gpus[", i, "] (", g.name, ")");
    if (g.memory_bytes == 0) return absl::InvalidArgumentError(where + ".memory_bytes must be > 0");
    if (g.sms == 0) return absl::InvalidArgumentError(where + ".sms must be > 0");
    if (g.sm.max_blocks == 0 || g.sm.max_warps == 0 || g.sm.registers == 0 ||
        g.sm.shared_bytes == 0) {
      return absl::InvalidArgumentError(where + ": per-SM limits must be > 0");
    }
  }
  if (options.policy.kind == PolicyKind::kCoreToGpu && options.policy.sessions_per_gpu == 0) {
    return absl::InvalidArgumentError("policy cg:N needs N >= 1");
  }
  return std::unique_ptr<Scheduler>(new Scheduler(std::move(gpus), std::move(options), sink));
}

Scheduler::Scheduler(std::vector<GpuSpec> gpus, Options options, EventSink *sink)
    : options_(std::move(options)), sink_(sink) {
  for (GpuSpec &spec : gpus) {
    GpuState g;
    g.nvml_free = spec.memory_bytes;
    if (options_.policy.kind == PolicyKind::kMgbSm) g.sm_use.resize(spec.sms);
    max_capacity_ = std::max(max_capacity_, spec.memory_bytes);
    g.spec = std::move(spec);
    gpus_.push_back(std::move(g));
  }
}

Scheduler::~Scheduler() = default;

void Scheduler::Emit(Event event) {
  if (sink_ != nullptr) sink_->OnEvent(event);
}

Event Scheduler::TaskEvent(EventKind kind, TaskId id, const Task &t, Micros now) const {
  Event e;
  e.kind = kind;
  e.time = now;
  e.session = t.session;
  e.task = id;
  e.gpu = t.gpu;
  e.memory_bytes = t.memory;
  e.warps = t.warps;
  return e;
}

Event Scheduler::GrowEvent(EventKind kind, TaskId id, const Task &t, Micros now) const {
  Event e = TaskEvent(kind, id, t, now);
  e.is_grow = true;
  e.grow_bytes = t.grow_extra;
  return e;
}

// ---- sessions -------------------------------------------------------------------------------

SessionId Scheduler::OpenSession(int64_t pid, std::string program, Micros now,
                                 uint32_t queue_priority) {
  const SessionId id = next_session_++;
  Session &s = sessions_[id];
  s.pid = pid;
  s.program = std::move(program);
  s.queue_priority = std::min(queue_priority, kMaxQueuePriority);
  s.context.assign(gpus_.size(), ContextState::kNone);
  Event e;
  e.kind = EventKind::kSessionOpened;
  e.time = now;
  e.session = id;
  Emit(e);
  return id;
}

// Takes a task out of the node: a waiting one leaves the queue (cancelled), a placed one drops a
// pending grow (cancelled) and releases what it holds (ended). The caller erases it.
void Scheduler::Withdraw(TaskId id, Task &t, CancelReason reason, Micros now) {
  if (t.gpu < 0) {
    Dequeue(id, t);
    Event e = TaskEvent(EventKind::kTaskCancelled, id, t, now);
    e.reason = reason;
    Emit(e);
    return;
  }
  if (t.grow_extra > 0) {
    Event e = GrowEvent(EventKind::kTaskCancelled, id, t, now);
    e.reason = reason;
    DropGrow(id, t);
    Emit(e);
  }
  ForgetGrowing(id, t);
  Release(t);
  gpus_[t.gpu].last_change = now;
  Emit(TaskEvent(EventKind::kTaskEnded, id, t, now));
}

absl::Status Scheduler::CloseSession(SessionId session, Micros now) {
  auto it = sessions_.find(session);
  if (it == sessions_.end())
    return Refusal(ErrorReason::kUnknownSession, absl::StrCat("session_id: no session ", session));
  Session &s = it->second;
  for (TaskId id : s.tasks) {
    Withdraw(id, tasks_.at(id), CancelReason::kSessionClosed, now);
    tasks_.erase(id);
  }
  for (size_t g = 0; g < gpus_.size(); ++g) {
    if (s.context[g] == ContextState::kNone) continue;
    gpus_[g].last_change = now;
    --gpus_[g].contexts;
    if (s.context[g] == ContextState::kCharged) --gpus_[g].pending_contexts;
  }
  if (s.pinned_gpu >= 0) --gpus_[s.pinned_gpu].pinned_sessions;
  sessions_.erase(it);
  Event e;
  e.kind = EventKind::kSessionClosed;
  e.time = now;
  e.session = session;
  Emit(e);
  RetryWaiting(now);
  return absl::OkStatus();
}

void Scheduler::ChargeContext(Session &s, int gpu) {
  if (s.context[gpu] != ContextState::kNone) return;
  s.context[gpu] = ContextState::kCharged;
  ++gpus_[gpu].contexts;
  ++gpus_[gpu].pending_contexts;
}

// ---- validation -----------------------------------------------------------------------------

absl::Status Scheduler::ValidateShape(const LaunchShape &shape) {
  const std::pair<const char *, uint32_t> dims[] = {
      {"shape.grid.x", shape.grid.x},   {"shape.grid.y", shape.grid.y},
      {"shape.grid.z", shape.grid.z},   {"shape.block.x", shape.block.x},
      {"shape.block.y", shape.block.y}, {"shape.block.z", shape.block.z}};
  for (const auto &[field, value] : dims) {
    if (value == 0) return Refusal(ErrorReason::kInvalidField, absl::StrCat(field, " must be > 0"));
  }
  if (std::string violation = CudaLaunchLimitViolation(shape); !violation.empty()) {
    return Refusal(ErrorReason::kInvalidField, violation);
  }
  return absl::OkStatus();
}

absl::Status Scheduler::ValidateRequest(const TaskRequest &r,
                                        const std::vector<bool> &hidden) const {
  if (absl::Status shape = ValidateShape(r.shape); !shape.ok()) return shape;
  uint64_t largest = 0;  // of the GPUs the process can open
  for (int g = 0; g < gpu_count(); ++g) {
    if (hidden.empty() || !hidden[g]) largest = std::max(largest, gpus_[g].spec.memory_bytes);
  }
  if (largest == 0 && !hidden.empty()) {
    return Refusal(ErrorReason::kInvalidField,
                   absl::StrCat("visible_pci_bus_ids: none of the ", r.visible_pci_bus_ids.size(),
                                " GPUs the process can open (first: ", r.visible_pci_bus_ids[0],
                                ") is a GPU of this mgbd"));
  }
  // A request that no GPU can ever hold would wait forever: refuse it now.
  const bool memory_blind = options_.policy.kind == PolicyKind::kCoreToGpu;
  const uint64_t need = r.memory_bytes + (memory_blind ? 0 : options_.context_reserve_bytes);
  if (r.memory_bytes > largest || need > largest) {
    return Refusal(ErrorReason::kNeverFits,
                   absl::StrCat("memory_bytes ", r.memory_bytes, " (", FormatBytes(r.memory_bytes),
                                ") plus a context reserve of ",
                                FormatBytes(memory_blind ? 0 : options_.context_reserve_bytes),
                                " exceeds the largest GPU",
                                largest < max_capacity_ ? " the process can open: " : "'s ",
                                FormatBytes(largest), " (", largest, " bytes)"));
  }
  if (options_.policy.kind == PolicyKind::kMgbSm) {
    bool any = false;
    for (int g = 0; g < gpu_count(); ++g) {
      if (hidden.empty() || !hidden[g]) any = any || BlocksPerEmptySm(gpus_[g].spec, r.shape) > 0;
    }
    if (!any) {
      return Refusal(ErrorReason::kNeverFits,
                     absl::StrCat("shape.block: one block (", r.shape.threads_per_block(),
                                  " threads, ", r.shape.registers_per_thread, " registers/thread, ",
                                  r.shape.shared_bytes_per_block,
                                  " shared bytes) does not fit on an SM of any GPU"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Scheduler::Task *> Scheduler::OwnedTask(SessionId session, TaskId task,
                                                       std::string_view field) {
  if (!sessions_.contains(session)) {
    return Refusal(ErrorReason::kUnknownSession, absl::StrCat("session_id: no session ", session));
  }
  auto it = tasks_.find(task);
  // Another session's task is reported exactly like a missing one: ids reveal nothing.
  if (it == tasks_.end() || it->second.session != session) {
    return Refusal(ErrorReason::kUnknownTask,
                   absl::StrCat(std::string(field), ": no task ", task, " in this session"));
  }
  return &it->second;
}

absl::StatusOr<Scheduler::Task *> Scheduler::PlacedTask(SessionId session, TaskId task) {
  absl::StatusOr<Task *> found = OwnedTask(session, task, "task_id");
  if (found.ok() && (*found)->gpu < 0) {
    return Refusal(ErrorReason::kTaskWaiting,
                   absl::StrCat("task_id: task ", task, " is still waiting for a GPU"));
  }
  return found;
}

namespace {

// NVML writes "00000000:19:00.0", CUDA "0000:19:00.0": equal when their numbers are (config
// GPUs' free-form ids: when the strings are).
bool SamePciBusId(const std::string &a, const std::string &b) {
  unsigned domain[2], bus[2], device[2], function[2];
  if (std::sscanf(a.c_str(), "%x:%x:%x.%x", &domain[0], &bus[0], &device[0], &function[0]) == 4 &&
      std::sscanf(b.c_str(), "%x:%x:%x.%x", &domain[1], &bus[1], &device[1], &function[1]) == 4) {
    return domain[0] == domain[1] && bus[0] == bus[1] && device[0] == device[1] &&
           function[0] == function[1];
  }
  return !a.empty() && a == b;
}

}  // namespace

// ---- tasks ----------------------------------------------------------------------------------

absl::StatusOr<BeginResult> Scheduler::TaskBegin(SessionId session, const TaskRequest &request,
                                                 Micros now) {
  auto sit = sessions_.find(session);
  if (sit == sessions_.end())
    return Refusal(ErrorReason::kUnknownSession, absl::StrCat("session_id: no session ", session));
  Task t = TaskFrom(session, request, now);
  if (absl::Status st = ValidateRequest(request, t.hidden); !st.ok()) return st;
  Session &s = sit->second;
  SettleQuietTasks(now);

  std::vector<bool> excluded(gpus_.size(), false);
  if (head_gpu_ >= 0) excluded[head_gpu_] = true;
  Fit fit = now < hold_until_ ? Fit{}
            : head_gpu_ >= 0  ? ChooseBehindHead(s, t, excluded, ShadowOfHead())
                              : Choose(s, t, excluded);
  if (fit.gpu < 0 && t.deadline != 0 && t.deadline <= now) {
    return Refusal(ErrorReason::kDeadline, "deadline_unix_ms: passed before a GPU had room");
  }
  const TaskId id = AddTask(s, std::move(t));
  Task &stored = tasks_.at(id);
  if (fit.gpu >= 0) {
    Place(id, stored, std::move(fit), now);
    FailHopelessGrows(now);  // its context reserve may take the room waiting grows need
    return BeginResult{id, stored.gpu};
  }
  Enqueue(id, stored);
  Emit(TaskEvent(EventKind::kTaskQueued, id, stored, now));
  if (waiting_.size() == 1) {  // the new head: it reserves its GPU
    stored.reserved_gpu = ChooseReservation(stored);
    head_gpu_ = stored.reserved_gpu;
    head_task_ = id;
  }
  return BeginResult{id, -1};
}

absl::StatusOr<TaskId> Scheduler::RestoreTask(SessionId session, int gpu,
                                              const TaskRequest &request, Micros now) {
  auto sit = sessions_.find(session);
  if (sit == sessions_.end())
    return Refusal(ErrorReason::kUnknownSession, absl::StrCat("session_id: no session ", session));
  if (gpu < 0 || gpu >= gpu_count()) {
    return Refusal(ErrorReason::kInvalidField, absl::StrCat("restore.gpu_index: GPU ", gpu,
                                                            " is not in this mgbd's inventory"));
  }
  Task t = TaskFrom(session, request, now);
  if (absl::Status st = ValidateRequest(request, t.hidden); !st.ok()) return st;
  // Its memory is in use already (NVML shows it), but never more than the GPU holds is granted.
  const GpuState &g = gpus_[gpu];
  const uint64_t unreserved = SaturatingSub(
      g.spec.memory_bytes, g.reserved + uint64_t{g.contexts} * options_.context_reserve_bytes);
  if (Needed(sit->second, gpu, request.memory_bytes) > unreserved) {
    return Refusal(ErrorReason::kNoRoom,
                   absl::StrCat("restore: GPU ", gpu, " has ", FormatBytes(unreserved),
                                " unreserved, less than the ", FormatBytes(request.memory_bytes),
                                " restored"));
  }
  Fit fit{gpu, {}};
  if (options_.policy.kind == PolicyKind::kMgbSm) {
    std::optional<std::vector<uint16_t>> blocks = FitSms(gpus_[gpu], request.shape);
    fit.sm_blocks = blocks ? std::move(*blocks) : std::vector<uint16_t>(gpus_[gpu].spec.sms, 0);
  }
  const TaskId id = AddTask(sit->second, std::move(t));
  Place(id, tasks_.at(id), std::move(fit), now);
  return id;
}

Scheduler::Task Scheduler::TaskFrom(SessionId session, const TaskRequest &request,
                                    Micros now) const {
  Task t;
  t.session = session;
  t.memory = request.memory_bytes;
  t.shape = request.shape;
  t.label = request.label;
  if (!request.label.empty()) {
    t.site = request.owner + '\0' + sessions_.at(session).program + '\0' + request.label;
    if (SiteShapes::Unknown(t.shape)) {
      if (std::optional<LaunchShape> learned = site_shapes_.Lookup(t.site)) t.shape = *learned;
    }
  }
  t.since = now;
  t.deadline = request.deadline;
  for (int g = 0; g < gpu_count() && !request.preferred_pci_bus_id.empty(); ++g) {
    if (SamePciBusId(gpus_[g].spec.pci_bus_id, request.preferred_pci_bus_id)) t.preferred_gpu = g;
  }
  t.hidden = HiddenGpus(request);
  t.provisional = request.provisional;
  return t;
}

std::vector<bool> Scheduler::HiddenGpus(const TaskRequest &request) const {
  if (request.visible_pci_bus_ids.empty()) return {};
  std::vector<bool> hidden(gpus_.size(), false);
  for (int g = 0; g < gpu_count(); ++g) {
    const std::string &id = gpus_[g].spec.pci_bus_id;
    if (id.empty()) continue;  // a config file's GPU: nothing to tell it by
    hidden[g] = std::ranges::none_of(request.visible_pci_bus_ids,
                                     [&](const std::string &v) { return SamePciBusId(id, v); });
  }
  return hidden;
}

TaskId Scheduler::AddTask(Session &s, Task t) {
  const TaskId id = next_task_++;
  t.order = QueueKey(s);
  tasks_.emplace(id, std::move(t));
  s.tasks.insert(id);
  return id;
}

void Scheduler::Place(TaskId id, Task &t, Fit fit, Micros now) {
  if (t.queue_seq != 0) Dequeue(id, t);
  Session &s = sessions_.at(t.session);
  GpuState &g = gpus_[fit.gpu];
  g.last_change = now;
  ChargeContext(s, fit.gpu);
  t.gpu = fit.gpu;
  t.since = now;
  t.reserved_gpu = -1;
  if (options_.policy.kind == PolicyKind::kMgbSm) {
    ChargeSms(g, t, std::move(fit.sm_blocks));
  } else {
    t.warps = WarpsOn(g, t.shape);
  }
  g.reserved += t.memory;
  g.unallocated += Unallocated(t.memory, t.allocated);
  g.warps += t.warps;
  ++g.tasks;
  g.placed.emplace(t.order, id);
  const bool pins =
      options_.policy.kind == PolicyKind::kSingle || options_.policy.kind == PolicyKind::kCoreToGpu;
  if (pins && s.pinned_gpu < 0) {
    s.pinned_gpu = fit.gpu;
    ++g.pinned_sessions;
    cg_next_ = static_cast<uint32_t>((fit.gpu + 1) % gpus_.size());
    // The session's other waiting tasks can now go only to its GPU: move them to that queue.
    for (TaskId other : s.tasks) {
      const Task &o = tasks_.at(other);
      if (o.queue_seq != 0 && waiting_index_.Remove(o.queue_seq)) {
        waiting_pinned_.emplace(o.queue_seq, other);
      }
    }
  }
  ++decisions_;
  MarkGrowing(id, t, now);
  Emit(TaskEvent(EventKind::kTaskPlaced, id, t, now));
}

uint64_t Scheduler::CountSms(GpuState &g, const LaunchShape &shape,
                             const std::vector<uint16_t> &sm_blocks, bool charge) {
  const uint32_t wpb = static_cast<uint32_t>(shape.warps_per_block());
  const uint32_t rpb =
      shape.registers_per_thread * static_cast<uint32_t>(shape.threads_per_block());
  auto count = [charge](auto &field, uint64_t n) { field = charge ? field + n : field - n; };
  uint64_t blocks = 0;
  for (size_t sm = 0; sm < sm_blocks.size(); ++sm) {
    const uint32_t n = sm_blocks[sm];
    count(g.sm_use[sm].blocks, n);
    count(g.sm_use[sm].warps, n * wpb);
    count(g.sm_use[sm].registers, n * rpb);
    count(g.sm_use[sm].shared_bytes, n * shape.shared_bytes_per_block);
    blocks += n;
  }
  count(g.sm_total.blocks, blocks);
  count(g.sm_total.warps, blocks * wpb);
  count(g.sm_total.registers, blocks * rpb);
  count(g.sm_total.shared_bytes, blocks * shape.shared_bytes_per_block);
  return blocks;
}

void Scheduler::ChargeSms(GpuState &g, Task &t, std::vector<uint16_t> sm_blocks) {
  const uint64_t blocks = CountSms(g, t.shape, sm_blocks, true);
  g.next_sm = static_cast<uint32_t>((g.next_sm + blocks) % g.spec.sms);
  t.warps = blocks * static_cast<uint32_t>(t.shape.warps_per_block());
  t.sm_blocks = std::move(sm_blocks);
}

void Scheduler::ReleaseSms(GpuState &g, Task &t) {
  if (t.sm_blocks.empty()) return;
  CountSms(g, t.shape, t.sm_blocks, false);
  t.sm_blocks.clear();
}

void Scheduler::Release(Task &t) {
  GpuState &g = gpus_[t.gpu];
  g.placed.erase(t.order);
  g.reserved -= t.memory;
  g.unallocated -= Unallocated(t.memory, t.allocated);
  g.warps -= t.warps;
  --g.tasks;
  ReleaseSms(g, t);
}

uint64_t Scheduler::QueueKey(const Session &s) {
  // The priority's complement in the top bits, the arrival counter below: map order is then
  // priority first (higher earlier), arrival second. 2^44 arrivals outlast any mgbd.
  constexpr int kArrivalBits = 44;
  const uint64_t priority = options_.queue_priority ? s.queue_priority : 0;
  return ((kMaxQueuePriority - priority) << kArrivalBits) | next_seq_++;
}

void Scheduler::Enqueue(TaskId id, Task &t) {
  t.queue_seq = t.order;
  waiting_.emplace(t.queue_seq, id);
  if (sessions_.at(t.session).pinned_gpu >= 0) {
    waiting_pinned_.emplace(t.queue_seq, id);
  } else {
    if (options_.policy.kind == PolicyKind::kMgbSm) t.min_warps = MinWarps(t.shape);
    if (BoundsDemand()) t.min_warps = MinDemand(t.shape);
    waiting_index_.Add(t.queue_seq, id, {t.memory, t.min_warps});
  }
  if (t.deadline != 0) deadlines_.emplace(t.deadline, id);
}

void Scheduler::Dequeue(TaskId id, Task &t) {
  waiting_.erase(t.queue_seq);
  if (waiting_pinned_.erase(t.queue_seq) == 0) waiting_index_.Remove(t.queue_seq);
  if (t.deadline != 0) deadlines_.erase({t.deadline, id});
  t.queue_seq = 0;
}

void Scheduler::DropGrow(TaskId id, Task &t) {
  gpus_[t.gpu].growing_extra -= t.grow_extra;
  growing_.erase(t.grow_seq);
  if (t.grow_deadline != 0) grow_deadlines_.erase({t.grow_deadline, id});
  t.grow_extra = 0;
  t.grow_seq = 0;
  t.grow_deadline = 0;
}

absl::StatusOr<GrowResult> Scheduler::TaskGrow(SessionId session, TaskId task, uint64_t extra_bytes,
                                               Micros deadline, Micros now) {
  absl::StatusOr<Task *> found = PlacedTask(session, task);
  if (!found.ok()) return found.status();
  Task &t = **found;
  if (t.grow_extra > 0)
    return Refusal(ErrorReason::kGrowPending,
                   absl::StrCat("task_id: task ", task, " already has a grow waiting"));
  if (extra_bytes == 0) return Refusal(ErrorReason::kInvalidField, "extra_bytes must be > 0");
  const GpuState &g = gpus_[t.gpu];
  const bool memory_blind = options_.policy.kind == PolicyKind::kCoreToGpu;
  // The session's context on this GPU is charged (Place) and stays: it can never be room.
  const uint64_t own_context = memory_blind ? 0 : options_.context_reserve_bytes;
  if (extra_bytes > g.spec.memory_bytes ||
      t.memory + own_context + extra_bytes > g.spec.memory_bytes) {
    return Refusal(
        ErrorReason::kNeverFits,
        absl::StrCat("extra_bytes ", extra_bytes, ": task ", task, " would exceed its GPU's ",
                     g.spec.memory_bytes, " bytes (it holds ", t.memory,
                     " plus a context reserve of ", own_context, ")"));
  }
  const GrowQueue queue = memory_blind ? GrowQueue{} : GrowQueues()[t.gpu];
  const bool fits = memory_blind || Available(g) >= extra_bytes;
  if (fits && queue.oldest_extra == 0) {
    ApplyGrow(task, t, extra_bytes, now);
    return GrowResult{true, t.memory, t.gpu};
  }
  // Waiting would hold this task's memory too: if that leaves the oldest grow here hopeless,
  // take the room now when there is some (past the older grows), else fail as the youngest.
  const uint64_t oldest_extra = queue.oldest_extra != 0 ? queue.oldest_extra : extra_bytes;
  if (!memory_blind && RoomForGrows(t.gpu, queue.held + t.memory) < oldest_extra) {
    if (fits) {
      ApplyGrow(task, t, extra_bytes, now);
      return GrowResult{true, t.memory, t.gpu};
    }
    return Refusal(ErrorReason::kNoRoom, NoRoomMessage(task, t.gpu, t.memory, extra_bytes));
  }
  if (deadline != 0 && deadline <= now) {
    return Refusal(ErrorReason::kDeadline, "deadline_unix_ms: passed before the GPU had room");
  }
  t.grow_extra = extra_bytes;
  t.grow_seq = next_seq_++;
  t.grow_deadline = deadline;
  growing_.emplace(t.grow_seq, task);
  gpus_[t.gpu].growing_extra += extra_bytes;
  if (deadline != 0) grow_deadlines_.emplace(deadline, task);
  t.allocating = true;
  MarkGrowing(task, t, now);
  Emit(GrowEvent(EventKind::kTaskQueued, task, t, now));
  return GrowResult{false, t.memory, t.gpu};
}

absl::StatusOr<bool> Scheduler::TaskUsage(SessionId session, TaskId task, uint64_t allocated_bytes,
                                          Micros now) {
  absl::StatusOr<Task *> found = PlacedTask(session, task);
  if (!found.ok()) return found.status();
  Task &t = **found;
  GpuState &g = gpus_[t.gpu];
  // A report that changes nothing (`mgb run` repeats its report every 2 s) is no change: NVML's
  // view must be able to settle (grow liveness) while programs hold still.
  bool changed = allocated_bytes != t.allocated;
  if (allocated_bytes > 0 && !t.allocating) {  // a first run's quiet time starts from here
    t.allocating = true;
    MarkGrowing(task, t, now);
  }
  g.unallocated -= Unallocated(t.memory, t.allocated);
  t.allocated = allocated_bytes;
  g.unallocated += Unallocated(t.memory, t.allocated);
  // Memory allocated means the process's context exists: NVML's free memory already shows it.
  Session &s = sessions_.at(session);
  if (allocated_bytes > 0 && s.context[t.gpu] == ContextState::kCharged) {
    s.context[t.gpu] = ContextState::kConfirmed;
    --g.pending_contexts;
    changed = true;
  }
  if (changed) g.last_change = now;
  // No retry here: NVML's free memory is stale until the caller's UpdateDeviceMemory.
  return changed;
}

absl::StatusOr<uint64_t> Scheduler::TaskLaunch(SessionId session, TaskId task,
                                               const LaunchShape &shape) {
  if (absl::Status valid = ValidateShape(shape); !valid.ok()) return valid;
  absl::StatusOr<Task *> found = PlacedTask(session, task);
  if (!found.ok()) return found.status();
  Task &t = **found;
  GpuState &g = gpus_[t.gpu];
  const uint64_t demand = WarpsOn(g, shape);
  site_shapes_.Learn(t.site, shape, demand);
  // A task counts its most demanding launch.
  if (demand <= WarpsOn(g, t.shape)) return t.warps;
  g.warps -= t.warps;
  ReleaseSms(g, t);
  t.shape = shape;
  std::optional<std::vector<uint16_t>> sms;
  if (options_.policy.kind == PolicyKind::kMgbSm) sms = FitSms(g, shape);
  if (sms) {
    ChargeSms(g, t, std::move(*sms));
  } else {
    t.warps = demand;  // mgb-sm past its room: over the GPU's warps, later tasks wait
  }
  g.warps += t.warps;
  return t.warps;
}

absl::Status Scheduler::TaskEnd(SessionId session, TaskId task, Micros now) {
  absl::StatusOr<Task *> found = OwnedTask(session, task, "task_id");
  if (!found.ok()) return found.status();
  Withdraw(task, **found, CancelReason::kCancelled, now);
  sessions_.at(session).tasks.erase(task);
  tasks_.erase(task);
  RetryWaiting(now);
  return absl::OkStatus();
}

absl::Status Scheduler::CancelWaiting(SessionId session, TaskId task, bool is_grow,
                                      CancelReason reason, Micros now) {
  absl::StatusOr<Task *> found = OwnedTask(session, task, "task_id");
  if (!found.ok()) return found.status();
  Task &t = **found;
  Event e = is_grow ? GrowEvent(EventKind::kTaskCancelled, task, t, now)
                    : TaskEvent(EventKind::kTaskCancelled, task, t, now);
  e.reason = reason;
  if (is_grow) {
    if (t.grow_extra == 0)
      return absl::NotFoundError(absl::StrCat("task_id: task ", task, " has no grow waiting"));
    DropGrow(task, t);
    Emit(e);
  } else {
    if (t.gpu >= 0)
      return absl::NotFoundError(absl::StrCat("task_id: task ", task, " is not waiting"));
    Dequeue(task, t);
    Emit(e);
    sessions_.at(session).tasks.erase(task);
    tasks_.erase(task);
  }
  RetryWaiting(now);
  return absl::OkStatus();
}

void Scheduler::ExpireDeadlines(Micros now) {
  bool any = false;
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    const TaskId id = deadlines_.begin()->second;
    Task &t = tasks_.at(id);
    Dequeue(id, t);
    Event e = TaskEvent(EventKind::kTaskCancelled, id, t, now);
    e.reason = CancelReason::kDeadline;
    Emit(e);
    sessions_.at(t.session).tasks.erase(id);
    tasks_.erase(id);
    any = true;
  }
  while (!grow_deadlines_.empty() && grow_deadlines_.begin()->first <= now) {
    const TaskId id = grow_deadlines_.begin()->second;
    Task &t = tasks_.at(id);
    Event e = GrowEvent(EventKind::kTaskCancelled, id, t, now);
    e.reason = CancelReason::kDeadline;
    DropGrow(id, t);
    Emit(e);
    any = true;
  }
  if (hold_until_ != 0 && hold_until_ <= now) {
    hold_until_ = 0;
    any = true;
  }
  if (SettleQuietTasks(now) && !waiting_.empty()) any = true;
  if (any) RetryWaiting(now);
}

std::optional<Micros> Scheduler::NextDeadline() const {
  std::optional<Micros> next;
  if (hold_until_ != 0) next = hold_until_;
  if (!deadlines_.empty())
    next = next ? std::min(*next, deadlines_.begin()->first) : deadlines_.begin()->first;
  if (!grow_deadlines_.empty()) {
    next = next ? std::min(*next, grow_deadlines_.begin()->first) : grow_deadlines_.begin()->first;
  }
  // A GPU where a first run settles may take a waiting one (first_runs.cpp).
  if (!waiting_.empty() && !unsettled_.empty()) {
    next = next ? std::min(*next, unsettled_.begin()->first) : unsettled_.begin()->first;
  }
  return next;
}

void Scheduler::UpdateDeviceMemory(int gpu, uint64_t free_bytes, uint64_t used_bytes, Micros now) {
  if (gpu < 0 || gpu >= gpu_count() || !gpus_[gpu].spec.has_nvml) return;
  gpus_[gpu].nvml_free = free_bytes;
  gpus_[gpu].nvml_used = used_bytes;
  gpus_[gpu].nvml_read = now;
  RetryWaiting(now);
}

}  // namespace mgb::core
