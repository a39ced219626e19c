// First runs: tasks whose memory is a guess (TaskRequest::provisional, a program mgbd has not seen
// finish) do not grow side by side on one GPU (scheduler.h, Options::unknown_settle_us;
// docs/service.md, "Programs without a learned peak"). Two such programs on one GPU, both growing,
// can together need more than it has, and then the younger one's grow fails; one at a time per
// GPU, each grows into room that only known reservations and settled programs share.
#include <utility>

#include "mgb/core/scheduler.h"

namespace mgb::core {

void Scheduler::MarkGrowing(TaskId id, Task &t, Micros now) {
  GrowingUntil(id, t, now + options_.unknown_settle_us);
}

void Scheduler::GrowingUntil(TaskId id, Task &t, Micros until) {
  const PolicyKind kind = options_.policy.kind;
  // single and cg:N give each session a GPU slot of its own, memory or not: no rule to add.
  if (!t.provisional || options_.unknown_settle_us <= 0 || t.gpu < 0 ||
      kind == PolicyKind::kSingle || kind == PolicyKind::kCoreToGpu) {
    return;
  }
  if (t.unsettled_until != 0) {
    unsettled_.erase({t.unsettled_until, id});
  } else {
    ++gpus_[t.gpu].unsettled;
  }
  t.unsettled_until = until;
  unsettled_.emplace(t.unsettled_until, id);
}

void Scheduler::ForgetGrowing(TaskId id, Task &t) {
  if (t.unsettled_until == 0) return;
  unsettled_.erase({t.unsettled_until, id});
  --gpus_[t.gpu].unsettled;
  t.unsettled_until = 0;
}

bool Scheduler::SettleQuietTasks(Micros now) {
  bool freed = false;
  while (!unsettled_.empty() && unsettled_.begin()->first <= now) {
    const TaskId id = unsettled_.begin()->second;
    Task &t = tasks_.at(id);
    if (t.grow_extra > 0) {  // still waiting to grow: it is not done growing
      MarkGrowing(id, t, now);
      continue;
    }
    // Not allocating yet (a framework takes seconds to import): growing, for a while.
    if (!t.allocating && now < t.since + options_.unknown_start_us) {
      GrowingUntil(id, t, t.since + options_.unknown_start_us);
      continue;
    }
    ForgetGrowing(id, t);
    freed = freed || gpus_[t.gpu].unsettled == 0;
  }
  return freed;
}

}  // namespace mgb::core
