#include "run_usage.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace mgb::cli {

bool RunUsage::Due() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (now.tv_sec - last_.tv_sec < 2) return false;
  last_ = now;
  return true;
}

void RunUsage::Report(const std::vector<uint64_t> &allocated, const std::vector<uint64_t> &peak) {
  const bool due = Due();
  for (size_t g = 0; g < placements_.size() && g < allocated.size(); ++g) {
    peak_[g] = std::max({peak_[g], allocated[g], g < peak.size() ? peak[g] : 0});
    if (allocated[g] == reported_[g] && peak_[g] == reported_peak_[g] && !due) continue;
    uint64_t room = 0;
    const absl::Status s = client_.TaskUsage(placements_[g].task_id, allocated[g], peak_[g], &room);
    if (!s.ok()) {
      if (!warned_) {
        std::fprintf(stderr, "mgb run: reporting GPU memory: %s\n",
                     std::string(s.message()).c_str());
      }
      warned_ = true;
      continue;
    }
    reported_[g] = allocated[g];
    reported_peak_[g] = peak_[g];
    if (guard_ != nullptr && room != 0) guard_->SetRoom(g, room);
  }
}

}  // namespace mgb::cli
