// `mgb batch --workers auto` (issue 35: the paper leaves "the right number of workers" open): how
// many jobs run at once, grown and shrunk from what the node shows instead of fixed up front.
// It starts at one job per GPU (single-assignment) and, once per period, looks at the node:
//   - a task waiting in mgbd's queue: the GPUs' memory (or mgbd's --max-slowdown demand bound)
//     is taken, and a further job would only wait: one slot less, never below one per GPU;
//   - else GPU kernel time (NVML, mean over the GPUs for the last period) below grow_below: the
//     GPUs sit idle part of the time, so one slot more per GPU (at most max; a job per GPU per
//     period keeps the ramp short: measured on 2 x H100, growing by one every 2 s took 12 s of a
//     65 s batch to reach 8); without NVML, the empty queue alone is enough;
//   - else hold: the GPUs are busy, and more jobs would share their SMs and slow their kernels
//     (and hold when mgbd does not answer).
// A running job is never stopped: a smaller count only starts fewer jobs. Plain logic, no I/O:
// the batch command feeds it NodeLoad readings.
#ifndef MGB_TOOLS_BATCH_ADAPTIVE_WORKERS_H
#define MGB_TOOLS_BATCH_ADAPTIVE_WORKERS_H

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace mgb::batch {

struct NodeLoad {
  std::optional<uint32_t> waiting_tasks;  // in mgbd's queue; nullopt: mgbd not reachable
  std::optional<double> busy;  // 0..1, share of the period a kernel ran; nullopt: no NVML
};

class AdaptiveWorkers {
 public:
  struct Options {
    int gpus = 1;             // the starting count and the least
    int max = 4096;           // never more (the job count, say)
    double period_s = 2.0;    // between decisions
    double grow_below = 0.8;  // kernel-time share under which the node takes one job more
  };
  explicit AdaptiveWorkers(Options options);

  // The slots from now on, deciding again when a period has passed since the last decision.
  int Observe(double now_s, const NodeLoad &load);
  int slots() const { return slots_; }
  bool Due(double now_s) const { return now_s >= next_decision_s_; }
  // Each change: (seconds since the batch start, the new count), the first one at 0.
  const std::vector<std::pair<double, int>> &history() const { return history_; }

 private:
  Options options_;
  int slots_;
  double next_decision_s_;
  std::vector<std::pair<double, int>> history_;
};

}  // namespace mgb::batch

#endif  // MGB_TOOLS_BATCH_ADAPTIVE_WORKERS_H
