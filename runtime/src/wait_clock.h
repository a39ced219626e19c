// WaitClock: how long a program's threads were blocked on mgbd (TaskBegin and TaskGrow return
// only once the GPU has room). libmgb prints the totals at exit as one line,
//   MGB_WAIT_MS begin=<ms> grow=<ms> begins=<calls> grows=<calls>
// so that `mgb batch` can tell time spent waiting for memory from kernels slowed by co-runners
// (a workload's kernel timer spans a launch that waited for its buffers' grow).
#ifndef MGB_RUNTIME_SRC_WAIT_CLOCK_H
#define MGB_RUNTIME_SRC_WAIT_CLOCK_H

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace mgb::runtime {

class WaitClock {
 public:
  enum Kind { kBegin = 0, kGrow = 1 };

  // Runs `call` (a blocking mgbd request) and adds the time it took to `kind`'s total.
  template <typename Call>
  auto Time(Kind kind, Call &&call) {
    const auto start = std::chrono::steady_clock::now();
    auto result = call();
    const auto took = std::chrono::steady_clock::now() - start;
    micros_[kind] += std::chrono::duration_cast<std::chrono::microseconds>(took).count();
    ++calls_[kind];
    return result;
  }

  // The MGB_WAIT_MS line (no newline), or "" when no request was made.
  std::string Line() const {
    if (calls_[kBegin] + calls_[kGrow] == 0) return "";
    char line[160];
    std::snprintf(line, sizeof line, "MGB_WAIT_MS begin=%.1f grow=%.1f begins=%llu grows=%llu",
                  micros_[kBegin] / 1000.0, micros_[kGrow] / 1000.0,
                  static_cast<unsigned long long>(calls_[kBegin].load()),
                  static_cast<unsigned long long>(calls_[kGrow].load()));
    return line;
  }

 private:
  std::array<std::atomic<uint64_t>, 2> micros_{};
  std::array<std::atomic<uint64_t>, 2> calls_{};
};

}  // namespace mgb::runtime

#endif  // MGB_RUNTIME_SRC_WAIT_CLOCK_H
