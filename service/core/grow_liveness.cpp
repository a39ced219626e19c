// Grow liveness: a grow that can never be granted fails instead of waiting forever (scheduler.h,
// docs/service.md "Grow liveness").
#include "mgb/core/scheduler.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "mgb/core/error_reason.h"
#include "saturating.h"

namespace mgb::core {

std::vector<Scheduler::GrowQueue> Scheduler::GrowQueues() const {
  std::vector<GrowQueue> queues(gpus_.size());
  for (const auto &[seq, id] : growing_) {  // FIFO: the first seen on a GPU is its oldest
    const Task &t = tasks_.at(id);
    GrowQueue &q = queues[t.gpu];
    q.held += t.memory;
    if (q.oldest_extra == 0) q.oldest_extra = t.grow_extra;
    q.youngest = id;
  }
  return queues;
}

// mgbd's own accounting, and NVML's view only once it has settled on this GPU (Options): NVML
// lags usage reports and ended processes, so a fresh reading could fail a grow that would be
// granted; a settled one shows memory the accounting cannot (contexts past their reserve,
// allocation rounding, programs outside mgbd), without which grows that fit by the accounting
// alone could wait for each other forever.
uint64_t Scheduler::RoomForGrows(int gpu, uint64_t held) const {
  const GpuState &g = gpus_[gpu];
  const uint64_t by_accounting =
      SaturatingSub(g.spec.memory_bytes, g.contexts * options_.context_reserve_bytes + held);
  const bool nvml_settled =
      g.spec.has_nvml && g.nvml_read >= g.last_change + options_.nvml_settle_us;
  if (!nvml_settled) return by_accounting;
  // Each task not waiting to grow, ending, would raise both terms of Available by its reservation.
  return std::min(by_accounting, Available(g) + SaturatingSub(g.reserved, held));
}

void Scheduler::FailHopelessGrows(Micros now) {
  if (growing_.empty() || options_.policy.kind == PolicyKind::kCoreToGpu) return;
  // Each failure takes the youngest grow's task out of the held sum; recount until none is
  // hopeless.
  for (bool failed = true; failed && !growing_.empty();) {
    failed = false;
    const std::vector<GrowQueue> queues = GrowQueues();
    for (int gpu = 0; gpu < gpu_count(); ++gpu) {
      const GrowQueue &q = queues[gpu];
      if (q.oldest_extra == 0 || RoomForGrows(gpu, q.held) >= q.oldest_extra) continue;
      Task &t = tasks_.at(q.youngest);
      Event e = GrowEvent(EventKind::kTaskCancelled, q.youngest, t, now);
      e.reason = CancelReason::kNoRoom;
      DropGrow(q.youngest, t);
      Emit(e);
      failed = true;
    }
  }
}

std::string Scheduler::NoRoomMessage(TaskId id, int gpu, uint64_t memory, uint64_t extra) const {
  return absl::StrCat("task ", id, " cannot grow by ", extra, " bytes on GPU ", gpu, " (",
                      gpus_[gpu].spec.name, ", ", gpus_[gpu].spec.memory_bytes,
                      " bytes): it holds ", memory,
                      " bytes, and even if every task there not waiting to grow ended, the tasks "
                      "waiting to grow would not have room (each holds memory another needs); the "
                      "youngest waiting grow fails");
}

absl::Status Scheduler::CancelStatus(const Event &e) const {
  switch (e.reason) {
    case CancelReason::kDeadline:
      return Refusal(ErrorReason::kDeadline,
                     e.is_grow ? "deadline_unix_ms: the GPU had no room for the grow in time"
                               : "deadline_unix_ms: no GPU had room in time");
    case CancelReason::kSessionClosed:
      return Refusal(ErrorReason::kSessionEnded, "session_id: the session ended");
    case CancelReason::kNoRoom:
      return Refusal(ErrorReason::kNoRoom,
                     NoRoomMessage(e.task, e.gpu, e.memory_bytes, e.grow_bytes));
    case CancelReason::kNone:
    case CancelReason::kCancelled: break;
  }
  return Refusal(ErrorReason::kCancelled, "cancelled");
}

}  // namespace mgb::core
