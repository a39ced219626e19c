#include "scheduler_counters.h"

#include <limits>

namespace mgb::server {

void SchedulerCounters::Record(const core::Event &event) {
  switch (event.kind) {
    case core::EventKind::kTaskQueued:
      if (event.is_grow) {
        ++grows_queued_;
      } else {
        ++tasks_queued_;
        queued_at_[event.task] = event.time;
      }
      break;
    case core::EventKind::kTaskPlaced: {
      core::Micros waited = 0;
      if (auto it = queued_at_.find(event.task); it != queued_at_.end()) {
        waited = event.time > it->second ? event.time - it->second : 0;
        queued_at_.erase(it);
      }
      const double seconds = static_cast<double>(waited) / 1e6;
      size_t bucket = 0;
      while (bucket < kWaitBounds.size() && seconds > kWaitBounds[bucket]) ++bucket;
      ++wait_buckets_[bucket];
      wait_seconds_sum_ += seconds;
      ++wait_count_;
      break;
    }
    case core::EventKind::kTaskGrown: ++grows_; break;
    case core::EventKind::kTaskCancelled:
      if (!event.is_grow) queued_at_.erase(event.task);
      ++cancellations_[{core::CancelReasonName(event.reason), event.is_grow}];
      break;
    default: break;
  }
}

void SchedulerCounters::Fill(v1::SchedulerCounters *out) const {
  out->set_tasks_queued(tasks_queued_);
  out->set_grows(grows_);
  out->set_grows_queued(grows_queued_);
  for (const auto &[key, count] : cancellations_) {
    v1::CancelCount *c = out->add_cancellations();
    c->set_reason(key.first);
    c->set_grow(key.second);
    c->set_count(count);
  }
  uint64_t cumulative = 0;
  for (size_t i = 0; i < wait_buckets_.size(); ++i) {
    cumulative += wait_buckets_[i];
    v1::WaitBucket *b = out->add_wait_buckets();
    b->set_le_seconds(i < kWaitBounds.size() ? kWaitBounds[i]
                                             : std::numeric_limits<double>::infinity());
    b->set_count(cumulative);
  }
  out->set_wait_seconds_sum(wait_seconds_sum_);
  out->set_wait_count(wait_count_);
}

}  // namespace mgb::server
