// `mgb batch --workers auto`'s controller (tools/batch/adaptive_workers.h), from readings alone.
#include <catch2/catch.hpp>

#include "adaptive_workers.h"

namespace mgb::batch {
namespace {

NodeLoad Load(std::optional<uint32_t> waiting, std::optional<double> busy) {
  NodeLoad load;
  load.waiting_tasks = waiting;
  load.busy = busy;
  return load;
}

TEST_CASE("auto workers start at one job per GPU and decide once per period", "[batch][auto]") {
  AdaptiveWorkers w({2, 16, 2.0, 0.8});
  CHECK(w.slots() == 2);
  CHECK(w.Observe(1.0, Load(0, 0.1)) == 2);  // before the first period: no decision
  CHECK(w.Observe(2.0, Load(0, 0.1)) == 4);  // idle GPUs, empty queue: one more per GPU
  CHECK(w.Observe(3.0, Load(0, 0.1)) == 4);  // within the period
  CHECK(w.Observe(4.0, Load(0, 0.1)) == 6);
  CHECK(w.history() == std::vector<std::pair<double, int>>{{0.0, 2}, {2.0, 4}, {4.0, 6}});
}

TEST_CASE("auto workers hold while the GPUs are busy and shrink while mgbd queues tasks",
          "[batch][auto]") {
  AdaptiveWorkers w({2, 16, 1.0, 0.8});
  CHECK(w.Observe(1.0, Load(0, 0.2)) == 4);   // one more per GPU
  CHECK(w.Observe(2.0, Load(0, 0.95)) == 4);  // busy: more jobs would only share SMs
  CHECK(w.Observe(3.0, Load(3, 0.2)) == 3);   // tasks wait: one fewer
  CHECK(w.Observe(4.0, Load(1, 0.2)) == 2);
  CHECK(w.Observe(5.0, Load(1, 0.2)) == 2);  // never below one per GPU
}

TEST_CASE("auto workers stay within max, and without readings hold", "[batch][auto]") {
  AdaptiveWorkers w({1, 2, 1.0, 0.8});                // one GPU: one more a period
  CHECK(w.Observe(1.0, Load(0, std::nullopt)) == 2);  // no NVML: the empty queue decides
  CHECK(w.Observe(2.0, Load(0, 0.0)) == 2);           // max
  CHECK(w.Observe(3.0, Load(std::nullopt, 0.0)) == 2);
  AdaptiveWorkers lone({4, 16, 1.0, 0.8});
  CHECK(lone.Observe(1.0, Load(std::nullopt, 0.0)) == 4);  // mgbd silent: hold
  AdaptiveWorkers few({8, 3, 1.0, 0.8});
  CHECK(few.slots() == 3);  // fewer jobs than GPUs: the jobs
}

}  // namespace
}  // namespace mgb::batch
