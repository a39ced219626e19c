// Scheduler's accounting: what a GPU has available (capacity and NVML's view), what a task needs
// there (its context reserve included), the context rule, and the snapshot Status shows.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "mgb/core/scheduler.h"
#include "saturating.h"

namespace mgb::core {

uint64_t Scheduler::Available(const GpuState &g) const {
  const uint64_t reserve = options_.context_reserve_bytes;
  const uint64_t by_capacity =
      SaturatingSub(g.spec.memory_bytes, g.reserved + g.contexts * reserve);
  if (!g.spec.has_nvml) return by_capacity;
  // NVML sees what programs allocated (ours and others'); subtract what we granted that is not
  // allocated yet, and the contexts that are probably not created yet.
  const uint64_t by_nvml = SaturatingSub(g.nvml_free, g.unallocated + g.pending_contexts * reserve);
  return std::min(by_capacity, by_nvml);
}

uint64_t Scheduler::Needed(const Session &s, int gpu, uint64_t memory) const {
  return memory + (s.context[gpu] == ContextState::kNone ? options_.context_reserve_bytes : 0);
}

// A launch's demand on a GPU, in warps of its capacity: the share of the SMs its resident blocks
// take. Registers or shared memory can fill an SM before its warps do (a kernel of 255 registers
// per thread leaves an SM's other warp slots unusable), so the share counts blocks against how many
// fit an empty SM, not warps against the warp slots (with neither known, the SM's block limit
// still can: blocks of one warp fill an SM at half its warps).
uint64_t Scheduler::WarpsOn(const GpuState &g, const LaunchShape &shape) const {
  const uint64_t capacity = g.spec.warp_capacity();
  const uint64_t per_sm = BlocksPerEmptySm(g.spec, shape);
  if (per_sm == 0) return std::min(shape.warps(), capacity);  // fits no SM: CUDA refuses it
  const uint64_t resident = std::min(shape.blocks(), per_sm * g.spec.sms);
  // resident / per_sm SMs' worth of warps, rounded up; split so no product can overflow.
  const uint64_t max_warps = g.spec.sm.max_warps;
  const uint64_t by_blocks =
      resident / per_sm * max_warps + (resident % per_sm * max_warps + per_sm - 1) / per_sm;
  return std::min(by_blocks, capacity);
}

uint64_t Scheduler::DemandLimit(const GpuState &g) const {
  const uint32_t excess = options_.max_slowdown_percent;
  if (excess == 0) return std::numeric_limits<uint64_t>::max();
  const uint64_t capacity = g.spec.warp_capacity();
  return capacity + SaturatingMul(capacity, excess) / 100;
}

bool Scheduler::AdmitsDemand(const GpuState &g, const Task &t) const {
  if (!BoundsDemand() || g.tasks == 0) return true;
  return g.warps + WarpsOn(g, t.shape) <= DemandLimit(g);  // each at most the GPU's warps
}

bool Scheduler::FitsMemory(const Session &s, int gpu, uint64_t memory) const {
  return RoomForTasks(gpus_[gpu]) >= Needed(s, gpu, memory) && ContextAdmissible(s, gpu);
}

// The context rule (docs/service.md, "Context reserves"). A reserve stays until its session
// ends, and a session ends only once its tasks ran: reserves that fill a GPU leave every session
// there waiting for room that only their own ends could free. So a new context is seated on g
// only while all contexts there take at most half of g (tasks keep the other half), and never
// where it would leave the blocked queue head no room once every task there has ended. The
// first context on a GPU is always allowed (validation made sure the task fits with it).
bool Scheduler::ContextAdmissible(const Session &s, int gpu) const {
  if (s.context[gpu] != ContextState::kNone) return true;
  const uint64_t reserve = options_.context_reserve_bytes;
  const GpuState &g = gpus_[gpu];
  if (reserve == 0 || g.contexts == 0) return true;
  const uint64_t contexts_after = (uint64_t{g.contexts} + 1) * reserve;
  if (contexts_after > g.spec.memory_bytes / 2) return false;
  if (head_task_ == 0) return true;
  const Task &head = tasks_.at(head_task_);
  const Session &head_session = sessions_.at(head.session);
  if (head.reserved_gpu != gpu || &head_session == &s) return true;
  const uint64_t head_needs = Needed(head_session, gpu, head.memory);
  return contexts_after + head_needs <= g.spec.memory_bytes;
}

uint64_t Scheduler::RoomForTasks(const GpuState &g) const {
  return SaturatingSub(Available(g), g.growing_extra);
}

absl::StatusOr<uint64_t> Scheduler::TaskRoom(SessionId session, TaskId task) const {
  auto it = tasks_.find(task);
  if (it == tasks_.end() || it->second.session != session || it->second.gpu < 0) {
    return absl::NotFoundError(absl::StrCat("task_id: no running task ", task, " in this session"));
  }
  return it->second.memory + RoomForTasks(gpus_[it->second.gpu]);
}

Snapshot Scheduler::Status() const {
  Snapshot snap;
  snap.policy = options_.policy.Name();
  snap.sessions = static_cast<uint32_t>(sessions_.size());
  snap.decisions = decisions_;
  for (const GpuState &g : gpus_) {
    GpuSnapshot gs;
    gs.spec = g.spec;
    gs.memory_reserved = g.reserved + g.contexts * options_.context_reserve_bytes;
    gs.memory_used = g.spec.has_nvml ? g.nvml_used : gs.memory_reserved;
    gs.memory_available = Available(g);
    gs.warps_in_use = g.warps;
    gs.tasks = g.tasks;
    gs.sessions = g.contexts;
    snap.gpus.push_back(std::move(gs));
  }
  auto describe = [&](TaskId id, const Task &t) {
    const Session &s = sessions_.at(t.session);
    return TaskSnapshot{id,       t.session, s.pid, s.program, t.label,
                        t.memory, t.warps,   t.gpu, t.since,   t.allocated};
  };
  std::vector<std::pair<TaskId, const Task *>> running;
  for (const auto &[id, t] : tasks_) {
    if (t.gpu >= 0) running.emplace_back(id, &t);
  }
  std::sort(running.begin(), running.end());
  for (const auto &[id, t] : running) snap.running.push_back(describe(id, *t));
  for (const auto &[seq, id] : waiting_) snap.waiting.push_back(describe(id, tasks_.at(id)));
  return snap;
}

}  // namespace mgb::core
