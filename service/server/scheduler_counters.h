// SchedulerCounters: what mgbd has decided since it started, counted from the core's events
// (placements and how long they waited, grows, give-ups by reason), for the metrics endpoint and
// `mgb status --format=prometheus`. Plain C++: fed under mgbd's lock, tests feed it events.
#ifndef MGB_SERVICE_SERVER_SCHEDULER_COUNTERS_H
#define MGB_SERVICE_SERVER_SCHEDULER_COUNTERS_H

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "mgb.pb.h"
#include "mgb/core/scheduler.h"

namespace mgb::server {

class SchedulerCounters {
 public:
  // Upper bounds of the wait-time histogram, in seconds (then +Inf).
  static constexpr std::array<double, 8> kWaitBounds = {0.001, 0.01, 0.1, 1, 10, 60, 600, 3600};

  void Record(const core::Event &event);
  void Fill(v1::SchedulerCounters *out) const;

 private:
  std::unordered_map<uint64_t, core::Micros> queued_at_;  // waiting tasks: when they queued
  uint64_t tasks_queued_ = 0, grows_ = 0, grows_queued_ = 0;
  std::map<std::pair<std::string, bool>, uint64_t> cancellations_;  // (reason, grow) -> count
  std::array<uint64_t, kWaitBounds.size() + 1> wait_buckets_{};     // not cumulative; last: +Inf
  double wait_seconds_sum_ = 0;
  uint64_t wait_count_ = 0;
};

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_SCHEDULER_COUNTERS_H
