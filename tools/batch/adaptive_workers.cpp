#include "adaptive_workers.h"

#include <algorithm>

namespace mgb::batch {

AdaptiveWorkers::AdaptiveWorkers(Options options)
    : options_(options),
      slots_(std::max(1, std::min(options.gpus, options.max))),
      next_decision_s_(options.period_s) {
  history_.emplace_back(0.0, slots_);
}

int AdaptiveWorkers::Observe(double now_s, const NodeLoad &load) {
  if (!Due(now_s)) return slots_;
  next_decision_s_ = now_s + options_.period_s;
  const int least = std::max(1, std::min(options_.gpus, options_.max));
  int next = slots_;
  if (load.waiting_tasks && *load.waiting_tasks > 0) {
    next = std::max(least, slots_ - 1);
  } else if (load.waiting_tasks && (!load.busy || *load.busy < options_.grow_below)) {
    next = std::min(options_.max, slots_ + least);  // without NVML, the queue alone decides
  }
  // mgbd not answering: hold, whatever NVML says (a full queue would not show).
  if (next != slots_) {
    slots_ = next;
    history_.emplace_back(now_s, slots_);
  }
  return slots_;
}

}  // namespace mgb::batch
