// The wait queue: FIFO, the blocked head reserves one GPU, backfilling on the others and in the
// head's shadow, release places waiters at once, deadlines.
#include <deque>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core_reference_scheduler.h"
#include "core_test_support.h"

namespace mgb::test {

TEST_CASE("a large task is not starved by a stream of small ones", "[core][fairness]") {
  Core c(Gpus(1, 16 * kGB), "mgb");
  const auto s = c.Open();
  std::deque<core::TaskId> running;
  for (int i = 0; i < 3; ++i) running.push_back(c.Begin(s, Request(4 * kGB)).task);  // 12 GB
  const auto big = c.Begin(s, Request(10 * kGB));
  REQUIRE(big.gpu == -1);
  // A stream of smalls: each step one small ends and a new small arrives. Without the head's
  // reservation every new small would fit (4 GB free) and the big task would wait forever.
  int steps = 0;
  for (; steps < 50 && c.sink.PlacedOn(big.task) < 0; ++steps) {
    const auto small = c.Begin(s, Request(4 * kGB), steps);
    // Only the first fits in the big task's shadow (10 + 4 <= 16); the others queue behind it.
    CHECK(small.gpu == (steps == 0 ? 0 : -1));
    REQUIRE(c.s->TaskEnd(s, running.front(), steps).ok());
    running.pop_front();
  }
  CHECK(c.sink.PlacedOn(big.task) == 0);
  // Placed once the three smalls older than it had ended (16 - 4 >= 10): the one in its shadow
  // delayed it by one end (without it, two would have sufficed) but no further.
  CHECK(steps == 3);
  // The smalls that queued behind it keep FIFO order and were placed as room allowed.
  CHECK(c.s->waiting_count() == 2);
}

TEST_CASE(
    "backfilling: younger tasks pass the blocked head on other GPUs, and on its GPU only in its "
    "shadow",
    "[core][fairness]") {
  Core c(Gpus(2, 16 * kGB), "mgb");
  const auto a = c.BeginSolo(Request(10 * kGB));  // g0
  const auto b = c.BeginSolo(Request(8 * kGB));   // g1 (fewer warps: tie -> lower index? g0 has 1)
  REQUIRE(a.gpu == 0);
  REQUIRE(b.gpu == 1);
  const auto big = c.BeginSolo(Request(12 * kGB));
  REQUIRE(big.gpu == -1);
  // The head reserves the GPU with most available memory among those able to hold it: g1 (8 free).
  const auto small1 = c.BeginSolo(Request(4 * kGB));
  CHECK(small1.gpu == 0);  // g0 has 6 GB free and is not reserved: backfilled
  // g0 is full now; g1 is reserved, but the head will need only 12 of its 16 GB once b has
  // ended: 4 GB is its shadow, which a younger task may take now.
  const auto small2 = c.BeginSolo(Request(4 * kGB));
  CHECK(small2.gpu == 1);
  const auto small3 = c.BeginSolo(Request(4 * kGB));
  CHECK(small3.gpu == -1);                           // the shadow is taken: 12 + 4 + 4 > 16
  REQUIRE(c.s->TaskEnd(b.session, b.task, 1).ok());  // g1 frees: the head goes first
  CHECK(c.sink.PlacedOn(big.task) == 1);
  CHECK(c.sink.PlacedOn(small3.task) == -1);
}

TEST_CASE(
    "the head's shadow counts a context reserve per session and refuses what the head would need",
    "[core][fairness]") {
  Core c(Gpus(1, 16 * kGB), "mgb", kGB);  // 1 GB context reserve
  const auto a = c.Open(), h = c.Open(), b = c.Open(), d = c.Open();
  const auto old = c.Begin(a, Request(6 * kGB));  // 7 GB used, 9 free
  const auto head =
      c.Begin(h, Request(10 * kGB));  // needs 11: waits; once `old` ends it needs 11 of 16
  REQUIRE(head.gpu == -1);
  CHECK(c.Begin(b, Request(4 * kGB)).gpu == 0);  // 5 GB with its context: 11 + 5 <= 16
  // Fits in memory now (1.5 of 4 GB free) but not in the shadow: 16 + 1.5 > 16.
  const auto late = c.Begin(d, Request(kGB / 2));
  CHECK(late.gpu == -1);
  REQUIRE(c.s->TaskEnd(a, old.task, 1).ok());
  CHECK(c.sink.PlacedOn(head.task) == -1);  // a's context still holds 1 GB: 10 free
  REQUIRE(c.s->CloseSession(a, 2).ok());
  CHECK(c.sink.PlacedOn(head.task) == 0);  // exactly room for it: 16 - 5 = 11
  CHECK(c.sink.PlacedOn(late.task) == -1);
}

TEST_CASE("single-assignment and core-to-GPU keep no shadow: the head's GPU stays closed",
          "[core][fairness]") {
  for (const char *policy : {"single", "cg:2", "mgb-sm"}) {
    Core c(Gpus(1, 16 * kGB), policy);
    const auto a = c.Open(), h = c.Open(), b = c.Open();
    c.Begin(a, Request(4 * kGB));
    if (std::string(policy) == "cg:2") c.Begin(c.Open(), Request(4 * kGB));
    const auto head = c.Begin(h, Request(12 * kGB + 1));
    REQUIRE(head.gpu == -1);
    CHECK(c.Begin(b, Request(kGB)).gpu == -1);
  }
}

TEST_CASE("the blocked head still takes whichever GPU frees first", "[core][fairness]") {
  Core c(Gpus(2, 16 * kGB), "mgb");
  const auto a = c.BeginSolo(Request(12 * kGB));    // g0: 4 free
  const auto b = c.BeginSolo(Request(10 * kGB));    // g1: 6 free
  const auto big = c.BeginSolo(Request(14 * kGB));  // reserves g1 (most free)
  REQUIRE(big.gpu == -1);
  REQUIRE(c.s->TaskEnd(a.session, a.task, 1).ok());  // g0 now has 16 free: the head is placed there
  CHECK(c.sink.PlacedOn(big.task) == 0);
  (void)b;
}

TEST_CASE("deadlines cancel waiters, and a passed deadline fails at once", "[core][fairness]") {
  Core c(Gpus(1, 16 * kGB), "mgb");
  const auto s = c.Open();
  c.Begin(s, Request(16 * kGB));
  core::TaskRequest r = Request(kGB);
  r.deadline = 1000;
  const auto waiting = c.Begin(s, r, 0);
  REQUIRE(waiting.gpu == -1);
  CHECK(c.s->NextDeadline() == 1000);
  c.s->ExpireDeadlines(999);
  CHECK(c.s->waiting_count() == 1);
  c.s->ExpireDeadlines(1000);
  CHECK(c.s->waiting_count() == 0);
  CHECK(c.sink.Has(core::EventKind::kTaskCancelled, waiting.task));
  CHECK_FALSE(c.s->NextDeadline().has_value());
  auto late = c.s->TaskBegin(s, r, 2000);
  REQUIRE_FALSE(late.ok());
  CHECK(late.status().code() == absl::StatusCode::kDeadlineExceeded);
}

TEST_CASE("closing a session releases its tasks and withdraws its waiters", "[core][fairness]") {
  Core c(Gpus(1, 16 * kGB), "mgb");
  const auto holder = c.Open(), other = c.Open();
  c.Begin(holder, Request(12 * kGB));
  const auto mine = c.Begin(holder, Request(8 * kGB));
  const auto theirs = c.Begin(other, Request(10 * kGB));
  REQUIRE(mine.gpu == -1);
  REQUIRE(theirs.gpu == -1);
  REQUIRE(c.s->CloseSession(holder, 5).ok());
  CHECK(c.sink.Has(core::EventKind::kTaskCancelled, mine.task));
  CHECK(c.sink.PlacedOn(theirs.task) == 0);
  CHECK(c.s->Status().gpus[0].memory_reserved == 10 * kGB);
}

TEST_CASE("grow happens at once when there is room, else waits for a release", "[core][fairness]") {
  Core c(Gpus(1, 16 * kGB), "mgb");
  const auto s = c.Open();
  const auto a = c.Begin(s, Request(4 * kGB));
  const auto b = c.Begin(s, Request(8 * kGB));
  auto grown = c.s->TaskGrow(s, a.task, 2 * kGB, 0, 1);
  REQUIRE(grown.ok());
  CHECK(grown->grown);
  CHECK(grown->memory_bytes == 6 * kGB);
  auto waits = c.s->TaskGrow(s, a.task, 4 * kGB, 0, 2);
  REQUIRE(waits.ok());
  CHECK_FALSE(waits->grown);
  REQUIRE(c.s->TaskEnd(s, b.task, 3).ok());
  CHECK(c.sink.Has(core::EventKind::kTaskGrown, a.task));
  CHECK(c.s->Status().gpus[0].memory_reserved == 10 * kGB);
  auto too_big = c.s->TaskGrow(s, a.task, 7 * kGB, 0, 4);
  REQUIRE_FALSE(too_big.ok());
  CHECK(too_big.status().code() == absl::StatusCode::kInvalidArgument);
}

// ---- decisions equal a straightforward reference ----------------------------------------------
// The core's wait queue is indexed for speed (WaitingIndex, O(1) room bounds, cached SM totals);
// none of it may change a decision. ReferenceScheduler retries every waiting task with a full
// Choose; one seeded random workload drives both, and every event must match, in order.

namespace {

std::string Describe(const core::Event &e) {
  return "kind " + std::to_string(static_cast<int>(e.kind)) + " session " +
         std::to_string(e.session) + " task " + std::to_string(e.task) + " gpu " +
         std::to_string(e.gpu) + " memory " + std::to_string(e.memory_bytes) + " warps " +
         std::to_string(e.warps) + " grow " + std::to_string(e.is_grow) + " grow_bytes " +
         std::to_string(e.grow_bytes) + " reason " + std::to_string(static_cast<int>(e.reason)) +
         " time " + std::to_string(e.time);
}

bool Same(const core::Event &a, const core::Event &b) { return Describe(a) == Describe(b); }

core::TaskRequest RandomRequest(std::mt19937_64 &rng, core::Micros now) {
  core::TaskRequest r;
  r.memory_bytes = (1 + rng() % 40) * (kGB / 2);
  r.shape.grid.x = static_cast<uint32_t>(1 + rng() % 48);
  r.shape.block.x = static_cast<uint32_t>(32 * (1 + rng() % 16));
  r.shape.registers_per_thread = static_cast<uint32_t>(32 * (rng() % 3));
  r.shape.shared_bytes_per_block = static_cast<uint32_t>(16384 * (rng() % 4));
  if (rng() % 5 == 0) r.deadline = now + 1 + static_cast<core::Micros>(rng() % 20000);
  return r;
}

struct Coverage {
  size_t events = 0;
  size_t placed_from_queue = 0;  // kTaskPlaced of a task that had been queued
  size_t backfilled = 0;         // kTaskPlaced while an older task still waits
  size_t longest_queue = 0;
  size_t grows_refused = 0;  // TaskGrow RESOURCE_EXHAUSTED: waiting would have been hopeless
  size_t grows_failed = 0;   // waiting grows failed later as hopeless (kNoRoom)
};

// Runs `steps` random operations through the core and the reference. A mismatch fails naming the
// step, the operation and both events.
Coverage CompareWithReference(const std::string &policy, uint64_t seed, int steps,
                              uint64_t reserve = 256 * core::kMiB, bool priorities = false) {
  std::vector<core::GpuSpec> gpus = Gpus(5, 0, 8);
  const uint64_t sizes[] = {16 * kGB, 24 * kGB, 32 * kGB, 40 * kGB, 24 * kGB};
  for (size_t g = 0; g < gpus.size(); ++g) gpus[g].memory_bytes = sizes[g];
  gpus[1].has_nvml = gpus[3].has_nvml = true;
  core::Options options{*core::ParsePolicy(policy), reserve};
  options.queue_priority = priorities;
  Core real(gpus, options);
  RecordingSink ref_sink;
  ReferenceScheduler ref(gpus, options, &ref_sink);

  std::mt19937_64 rng(seed);
  std::vector<core::SessionId> sessions;
  std::vector<std::pair<core::SessionId, core::TaskId>> tasks;    // every task begun, maybe gone
  std::vector<std::pair<core::SessionId, core::TaskId>> running;  // placed, as the core said
  auto any_task = [&] { return tasks[rng() % tasks.size()]; };
  // Mostly a running task, so that releases keep the queue moving.
  auto some_task = [&] {
    return running.empty() || rng() % 5 == 0 ? any_task() : running[rng() % running.size()];
  };
  core::Micros now = 0;
  size_t compared = 0;
  Coverage coverage;
  std::set<core::TaskId> queued, waiting;
  for (int step = 0; step < steps; ++step) {
    now += static_cast<core::Micros>(rng() % 1000);
    const uint64_t dice = rng() % 100;
    std::string op;
    if (dice < 6 || sessions.size() < 14) {  // more sessions than single/cg:2 have GPUs for
      op = "open";
      const uint32_t priority = priorities ? static_cast<uint32_t>(rng() % 4) : 0;
      const core::SessionId s = real.s->OpenSession(1, "p", now, priority);
      REQUIRE(ref.OpenSession(now, priority) == s);
      sessions.push_back(s);
    } else if ((dice < 45 && real.s->waiting_count() < 60) || tasks.empty()) {
      op = "begin";
      const core::SessionId s = sessions[rng() % sessions.size()];
      const core::TaskRequest r = RandomRequest(rng, now);
      auto got = real.s->TaskBegin(s, r, now);
      REQUIRE(got.ok());
      REQUIRE(ref.TaskBegin(s, r, now) == std::optional<int>(got->gpu));
      tasks.emplace_back(s, got->task);
    } else if (dice < 68) {
      op = "end";
      const auto [s, t] = some_task();
      REQUIRE(real.s->TaskEnd(s, t, now).ok() == ref.TaskEnd(s, t, now));
    } else if (dice < 76) {
      op = "close";
      const size_t i = rng() % sessions.size();
      REQUIRE(real.s->CloseSession(sessions[i], now).ok() == ref.CloseSession(sessions[i], now));
      sessions.erase(sessions.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (dice < 81) {
      op = "grow";
      const auto [s, t] = some_task();
      const uint64_t extra = (1 + rng() % 8) * (kGB / 2);
      const core::Micros deadline =
          rng() % 3 == 0 ? now + 1 + static_cast<core::Micros>(rng() % 20000) : 0;
      auto got = real.s->TaskGrow(s, t, extra, deadline, now);
      const std::optional<bool> want = ref.TaskGrow(s, t, extra, deadline, now);
      REQUIRE(got.ok() == want.has_value());
      if (got.ok()) REQUIRE(got->grown == *want);
      coverage.grows_refused += got.status().code() == absl::StatusCode::kResourceExhausted;
    } else if (dice < 86) {
      op = "usage";
      const auto [s, t] = some_task();
      const uint64_t allocated = rng() % 4 == 0 ? 0 : (rng() % 20) * (kGB / 2);
      REQUIRE(real.s->TaskUsage(s, t, allocated, now).ok() == ref.TaskUsage(s, t, allocated));
    } else if (dice < 90) {
      op = "cancel";
      const auto [s, t] = any_task();
      const bool is_grow = rng() % 2 == 0;
      REQUIRE(real.s->CancelWaiting(s, t, is_grow, core::CancelReason::kCancelled, now).ok() ==
              ref.CancelWaiting(s, t, is_grow, now));
    } else if (dice < 95) {
      op = "nvml";
      const int g = static_cast<int>(rng() % gpus.size());
      const uint64_t free_bytes = rng() % (gpus[g].memory_bytes + 1);
      real.s->UpdateDeviceMemory(g, free_bytes, gpus[g].memory_bytes - free_bytes, now);
      ref.UpdateDeviceMemory(g, free_bytes, gpus[g].memory_bytes - free_bytes, now);
    } else {
      op = "expire";
      real.s->ExpireDeadlines(now);
      ref.ExpireDeadlines(now);
    }
    const auto &a = real.sink.events;
    const auto &b = ref_sink.events;
    for (; compared < std::max(a.size(), b.size()); ++compared) {
      if (compared >= a.size() || compared >= b.size() || !Same(a[compared], b[compared])) {
        FAIL("policy " << policy << " seed " << seed << " step " << step << " (" << op << ") event "
                       << compared << ": core "
                       << (compared < a.size() ? Describe(a[compared]) : "none") << "; reference "
                       << (compared < b.size() ? Describe(b[compared]) : "none"));
      }
      const core::Event &e = a[compared];
      if (e.kind == core::EventKind::kTaskQueued && !e.is_grow) {
        queued.insert(e.task);
        waiting.insert(e.task);
      }
      if (e.kind == core::EventKind::kTaskCancelled && !e.is_grow) waiting.erase(e.task);
      coverage.grows_failed += e.reason == core::CancelReason::kNoRoom;
      if (e.kind == core::EventKind::kTaskPlaced) {
        waiting.erase(e.task);
        coverage.placed_from_queue += queued.count(e.task);
        coverage.backfilled += !waiting.empty() && *waiting.begin() < e.task;
        running.emplace_back(a[compared].session, a[compared].task);
      }
      if (a[compared].kind == core::EventKind::kTaskEnded) {
        std::erase(running, std::make_pair(a[compared].session, a[compared].task));
      }
    }
    REQUIRE(real.s->waiting_count() == ref.waiting_count());
    coverage.longest_queue = std::max(coverage.longest_queue, real.s->waiting_count());
  }
  coverage.events = compared;
  return coverage;
}

}  // namespace

TEST_CASE("queue priority: a later, higher-priority task is placed before older ones; off, FIFO",
          "[core][fairness][priority]") {
  for (const bool honoured : {true, false}) {
    core::Options options{*core::ParsePolicy("mgb"), 0};
    options.queue_priority = honoured;
    Core c(Gpus(1, 16 * kGB), options);
    const auto holder = c.s->OpenSession(1, "holder", 0);
    const auto running = c.Begin(holder, Request(10 * kGB));
    REQUIRE(running.gpu == 0);
    // Two low-priority tasks queue first (the first is the head), then a high-priority one.
    const auto low1 = c.Begin(c.s->OpenSession(2, "low1", 0, 1), Request(8 * kGB));
    const auto low2 = c.Begin(c.s->OpenSession(3, "low2", 0, 1), Request(8 * kGB));
    const auto high = c.Begin(c.s->OpenSession(4, "high", 0, 9), Request(12 * kGB));
    REQUIRE((low1.gpu == -1 && low2.gpu == -1 && high.gpu == -1));
    REQUIRE(c.s->TaskEnd(holder, running.task, 1).ok());
    INFO("queue priority " << (honoured ? "on" : "off"));
    if (honoured) {  // 12 GB first; then neither 8 GB task fits beside it
      CHECK(c.sink.PlacedOn(high.task) == 0);
      CHECK(c.sink.PlacedOn(low1.task) == -1);
      CHECK(c.sink.PlacedOn(low2.task) == -1);
    } else {  // arrival order: both 8 GB tasks, the 12 GB one waits
      CHECK(c.sink.PlacedOn(low1.task) == 0);
      CHECK(c.sink.PlacedOn(low2.task) == 0);
      CHECK(c.sink.PlacedOn(high.task) == -1);
    }
  }
}

TEST_CASE("with queue priorities the core decides exactly as the reference on random workloads",
          "[core][fairness][reference][priority]") {
  for (const std::string policy : {"mgb", "mgb-sm", "cg:2"}) {
    for (uint64_t seed = 11; seed <= 13; ++seed) {
      const Coverage c = CompareWithReference(policy, seed, 3000, 256 * core::kMiB, true);
      INFO(policy << " seed " << seed << ": " << c.placed_from_queue << " placed from the queue");
      CHECK(c.placed_from_queue > 150);
      CHECK(c.longest_queue >= 20);
    }
  }
}

TEST_CASE("every policy decides exactly as the straightforward reference on random workloads",
          "[core][fairness][reference]") {
  for (const std::string policy : {"mgb", "memory", "schedgpu", "mgb-sm", "single", "cg:2"}) {
    size_t grows_refused = 0;
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      const Coverage c = CompareWithReference(policy, seed, 4000);
      grows_refused += c.grows_refused;
      INFO(policy << " seed " << seed << ": " << c.events << " events, " << c.placed_from_queue
                  << " placed from the queue, " << c.backfilled
                  << " past an older waiter, queue up to " << c.longest_queue
                  << ", grows refused / failed as hopeless " << c.grows_refused << " / "
                  << c.grows_failed);
      // The workload really exercised the queue and backfilling, not only immediate placements.
      CHECK(c.placed_from_queue > 250);
      CHECK(c.backfilled > 100);
      CHECK(c.longest_queue >= 20);
    }
    // Grow liveness refused grows that could only have waited forever (cg:N: grows never wait).
    INFO(policy << ": grows refused as hopeless " << grows_refused);
    if (policy != "cg:2") CHECK(grows_refused > 0);
  }
}

TEST_CASE(
    "grow liveness decides as the reference; a waiting grow is never failed later by accounting",
    "[core][fairness][reference]") {
  // With 1 GiB context reserves. Placements never take the room waiting grows wait for (not even
  // a new session's context), so once a grow waits, no placement can make it hopeless: grows are
  // refused at TaskGrow when waiting would be hopeless, and none fails later (the NVML-settled
  // bound can still fail one; these GPUs' NVML never settles: steps are < 1 ms apart).
  const Coverage c = CompareWithReference("mgb", 4, 4000, kGB);
  INFO("grows refused / failed as hopeless " << c.grows_refused << " / " << c.grows_failed);
  CHECK(c.grows_refused > 0);
  CHECK(c.grows_failed == 0);
}

}  // namespace mgb::test
