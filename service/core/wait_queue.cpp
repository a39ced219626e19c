// The wait queue: tasks that fit nowhere yet wait in arrival order; the head keeps a shadow (the
// room it will take when it can start) and tasks behind it are backfilled only where they do not
// delay it; waiting grows are retried first (docs/service.md, "Fair wait queue").
#include "mgb/core/scheduler.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "saturating.h"

namespace mgb::core {

void Scheduler::RetryWaiting(Micros now) {
  SettleQuietTasks(now);
  RetryGrows(now);
  PlaceWaitingTasks(now);
  // Placements may charge contexts. Failing a grow frees nothing: no retry is needed after it.
  FailHopelessGrows(now);
}

void Scheduler::PlaceWaitingTasks(Micros now) {
  if (now < hold_until_) return;  // restored tasks first (HoldNewTasksUntil)
  head_gpu_ = -1;
  head_task_ = 0;
  std::vector<bool> excluded(gpus_.size(), false);
  // FIFO from the front until the first task that cannot be placed: the head, which reserves.
  uint64_t head_seq = 0;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    const TaskId id = it->second;
    Task &t = tasks_.at(id);
    Fit fit = Choose(sessions_.at(t.session), t, excluded);
    if (fit.gpu >= 0) {
      ++it;  // Place dequeues t
      Place(id, t, std::move(fit), now);
      continue;
    }
    if (t.reserved_gpu < 0) t.reserved_gpu = ChooseReservation(t);
    head_gpu_ = t.reserved_gpu;
    head_task_ = id;
    excluded[head_gpu_] = true;
    head_seq = it->first;
    break;
  }
  if (head_gpu_ < 0) return;
  // Backfilling on the other GPUs and in the head's shadow, FIFO among the tasks that could fit
  // there. Placing only shrinks the room, so a task skipped (or refused) once stays unplaceable
  // during this pass.
  Shadow shadow = ShadowOfHead();
  if (gpus_.size() == 1 && shadow.gpu < 0) return;
  OpenRoom room = RoomForUnpinned(excluded, shadow);
  WaitingIndex::Entry next{head_seq, 0};
  while (NextCandidate(next.seq, room, next)) {
    Task &t = tasks_.at(next.id);
    Fit fit = ChooseBehindHead(sessions_.at(t.session), t, excluded, shadow);
    if (fit.gpu >= 0) {
      if (fit.gpu == shadow.gpu) TakeShadow(shadow, t);
      Place(next.id, t, std::move(fit), now);
      room = RoomForUnpinned(excluded, shadow);
    }
  }
}

Scheduler::Shadow Scheduler::ShadowOfHead() const {
  Shadow shadow;
  const PolicyKind kind = options_.policy.kind;
  if (head_task_ == 0 ||
      (kind != PolicyKind::kMgb && kind != PolicyKind::kMemory && kind != PolicyKind::kSchedGpu)) {
    return shadow;
  }
  const Task &head = tasks_.at(head_task_);
  const GpuState &g = gpus_[head.reserved_gpu];
  // What the GPU must hold once every task ahead of the head in queue order has ended: the head
  // with its session's context, and every task placed there that comes after it in that order
  // with theirs. In arrival order (no queue priorities) those are the tasks begun after it.
  shadow.gpu = head.reserved_gpu;
  shadow.capacity = g.spec.memory_bytes;
  shadow.sessions.push_back(head.session);
  shadow.held = head.memory + options_.context_reserve_bytes;
  shadow.demand = WarpsOn(g, head.shape);
  for (auto it = g.placed.upper_bound(head.order); it != g.placed.end(); ++it) {
    TakeShadow(shadow, tasks_.at(it->second));
  }
  return shadow;
}

uint64_t Scheduler::ShadowCost(const Shadow &shadow, const Task &t) const {
  const bool charged = std::ranges::find(shadow.sessions, t.session) != shadow.sessions.end();
  return t.memory + (charged ? 0 : options_.context_reserve_bytes);
}

void Scheduler::TakeShadow(Shadow &shadow, const Task &t) const {
  shadow.held += ShadowCost(shadow, t);
  shadow.demand += WarpsOn(gpus_[shadow.gpu], t.shape);
  if (std::ranges::find(shadow.sessions, t.session) == shadow.sessions.end()) {
    shadow.sessions.push_back(t.session);
  }
}

Scheduler::Fit Scheduler::ChooseBehindHead(const Session &s, const Task &t,
                                           const std::vector<bool> &excluded,
                                           const Shadow &shadow) const {
  Fit fit = Choose(s, t, excluded);
  if (fit.gpu >= 0 || shadow.gpu < 0 || Closed(t, shadow.gpu)) return fit;
  // Under a demand bound the jumpers leave the head its demand too, or they could hold it forever.
  const GpuState &g = gpus_[shadow.gpu];
  if (FitsMemory(s, shadow.gpu, t.memory) &&
      shadow.held + ShadowCost(shadow, t) <= shadow.capacity && AdmitsDemand(g, t) &&
      (!BoundsDemand() || shadow.demand + WarpsOn(g, t.shape) <= DemandLimit(g))) {
    return Fit{shadow.gpu, {}};
  }
  return Fit{};
}

bool Scheduler::NextCandidate(uint64_t after_seq, const OpenRoom &room,
                              WaitingIndex::Entry &next) const {
  std::optional<WaitingIndex::Entry> unpinned;
  if (room.open) unpinned = waiting_index_.FirstAfter(after_seq, room.limits);
  auto pinned = waiting_pinned_.upper_bound(after_seq);
  if (pinned != waiting_pinned_.end() && (!unpinned || pinned->first < unpinned->seq)) {
    next = WaitingIndex::Entry{pinned->first, pinned->second};
    return true;
  }
  if (!unpinned) return false;
  next = *unpinned;
  return true;
}

uint64_t Scheduler::WarpRoom(const GpuState &g) const {
  if (!BoundsDemand()) return SaturatingSub(g.spec.warp_capacity(), g.warps);
  if (g.tasks == 0) return std::numeric_limits<uint64_t>::max();  // takes any task
  return SaturatingSub(DemandLimit(g), g.warps);
}

Scheduler::OpenRoom Scheduler::RoomForUnpinned(const std::vector<bool> &excluded,
                                               const Shadow &shadow) const {
  const PolicyKind kind = options_.policy.kind;
  OpenRoom room;
  if (shadow.gpu >= 0) {
    room.open = true;
    room.limits[0] =
        std::min(RoomForTasks(gpus_[shadow.gpu]), SaturatingSub(shadow.capacity, shadow.held));
  }
  for (int g = 0; g < gpu_count(); ++g) {
    const GpuState &gpu = gpus_[g];
    if (excluded[g]) continue;
    if (kind == PolicyKind::kSingle && gpu.pinned_sessions > 0) continue;
    if (kind == PolicyKind::kCoreToGpu && gpu.pinned_sessions >= options_.policy.sessions_per_gpu) {
      continue;
    }
    room.open = true;
    room.limits[0] = std::max(room.limits[0], RoomForTasks(gpu));
    room.limits[1] = std::max(room.limits[1], WarpRoom(gpu));
  }
  constexpr uint64_t kAny = std::numeric_limits<uint64_t>::max();
  if (kind == PolicyKind::kCoreToGpu) room.limits[0] = kAny;  // memory-blind
  if (shadow.gpu >= 0 && BoundsDemand()) {
    const GpuState &g = gpus_[shadow.gpu];
    room.limits[1] = std::max(room.limits[1], SaturatingSub(DemandLimit(g), shadow.demand));
  }
  // Warps are hard only under mgb-sm, and under mgb with a demand bound.
  if (kind != PolicyKind::kMgbSm && !BoundsDemand()) room.limits[1] = kAny;
  return room;
}

void Scheduler::RetryGrows(Micros now) {
  // FIFO per GPU: a blocked grow holds back later grows on the same GPU only.
  if (growing_.empty()) return;
  std::vector<bool> blocked(gpus_.size(), false);
  for (auto it = growing_.begin(); it != growing_.end();) {
    const TaskId id = it->second;
    Task &t = tasks_.at(id);
    GpuState &g = gpus_[t.gpu];
    if (blocked[t.gpu] ||
        (options_.policy.kind != PolicyKind::kCoreToGpu && Available(g) < t.grow_extra)) {
      blocked[t.gpu] = true;
      ++it;
      continue;
    }
    ++it;  // DropGrow erases the entry it was on
    const uint64_t extra = t.grow_extra;
    DropGrow(id, t);
    ApplyGrow(id, t, extra, now);
  }
}

void Scheduler::ApplyGrow(TaskId id, Task &t, uint64_t extra, Micros now) {
  GpuState &g = gpus_[t.gpu];
  g.last_change = now;
  g.reserved += extra;
  g.unallocated -= Unallocated(t.memory, t.allocated);
  t.memory += extra;
  g.unallocated += Unallocated(t.memory, t.allocated);
  t.allocating = true;
  MarkGrowing(id, t, now);
  Event grown = TaskEvent(EventKind::kTaskGrown, id, t, now);
  grown.grow_bytes = extra;
  Emit(grown);
}

}  // namespace mgb::core
