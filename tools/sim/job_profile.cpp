#include "job_profile.h"

#include <algorithm>

namespace mgb::sim {

uint64_t TaskProfile::MemoryAt(double progress) const {
  uint64_t bytes = memory.empty() ? memory_bytes : memory.front().bytes;
  for (const MemoryStep &step : memory) {
    if (step.at > progress) break;
    bytes = step.bytes;
  }
  return bytes;
}

uint64_t TaskProfile::PeakMemory() const {
  uint64_t peak = memory.empty() ? memory_bytes : 0;
  for (const MemoryStep &step : memory) peak = std::max(peak, step.bytes);
  return peak;
}

std::vector<double> TaskProfile::MemoryChangePoints() const {
  std::vector<double> points;
  for (const MemoryStep &step : memory) {
    if (step.at > 0.0 && step.at < 1.0) points.push_back(step.at);
  }
  return points;  // steps are validated ascending when a trace is read
}

double JobProfile::SoloSeconds() const {
  double seconds = host_after_s;
  for (const TaskProfile &task : tasks) seconds += task.host_before_s + task.solo_s;
  return seconds;
}

}  // namespace mgb::sim
