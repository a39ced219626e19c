// Memory accounting: context reserves, the NVML term (memory used outside mgbd, granted but not
// yet allocated), and grow liveness (tasks waiting to grow never wait for each other forever).
#include <set>
#include <string>

#include "core_test_support.h"
#include "mgb/core/error_reason.h"

namespace mgb::test {

TEST_CASE("context reserve: charged once per session and GPU, held until the session ends",
          "[core][memory]") {
  Core c(Gpus(1, 16 * kGB), "mgb", kGB);
  const auto a = c.Open(), b = c.Open();
  c.Begin(a, Request(10 * kGB));
  CHECK(c.Available(0) == 5 * kGB);  // 16 - 10 - 1 (a's context)
  const auto second = c.Begin(a, Request(5 * kGB));
  CHECK(second.gpu == 0);  // a already has its context here: no second reserve
  CHECK(c.Available(0) == 0);
  REQUIRE(c.s->TaskEnd(a, second.task, 1).ok());
  const auto other = c.Begin(b, Request(9 * kGB / 2));
  CHECK(other.gpu == -1);  // 4.5 GB + b's 1 GB context > 5 GB free
  REQUIRE(c.s->TaskEnd(a, 1, 2).ok());
  CHECK(c.sink.PlacedOn(other.task) == 0);
  // a has no task left but keeps its context reserve until it ends.
  CHECK(c.s->Status().gpus[0].memory_reserved == 9 * kGB / 2 + 2 * kGB);
  CHECK(c.s->Status().gpus[0].sessions == 2);
  REQUIRE(c.s->CloseSession(a, 3).ok());
  CHECK(c.s->Status().gpus[0].memory_reserved == 9 * kGB / 2 + kGB);
}

// Issue 32, item 3: a restore was placed whatever the accounting said (104 GiB on 16 GiB).
TEST_CASE("a restored task is never granted past the GPU's capacity", "[core][memory]") {
  Core c(Gpus(1, 16 * kGB), "mgb", kGB);
  const auto a = c.Open();
  REQUIRE(c.s->RestoreTask(a, 0, Request(10 * kGB), 1).ok());
  const auto past = c.s->RestoreTask(a, 0, Request(6 * kGB), 2);  // 10 + 6 + a's context > 16
  CHECK(core::ReasonOf(past.status()) == core::ErrorReason::kNoRoom);
  CHECK(c.s->RestoreTask(a, 0, Request(5 * kGB), 3).ok());
  CHECK(c.s->Status().gpus[0].memory_reserved == 16 * kGB);
}

TEST_CASE("NVML term: memory used by others counts, granted-but-unallocated is held back",
          "[core][memory]") {
  auto gpus = Gpus(1, 16 * kGB);
  gpus[0].has_nvml = true;
  Core c(gpus, "mgb", kGB);
  // Another program mgbd does not manage uses 6 GB: NVML says 10 GB free.
  c.s->UpdateDeviceMemory(0, 10 * kGB, 6 * kGB, 0);
  CHECK(c.Available(0) == 10 * kGB);
  const auto s = c.Open();
  const auto t = c.Begin(s, Request(4 * kGB));
  REQUIRE(t.gpu == 0);
  // Granted 4 GB + 1 GB context, nothing allocated yet, NVML unchanged: 10 - 4 - 1.
  CHECK(c.Available(0) == 5 * kGB);
  // The program allocated 3 GB (context created too): NVML now says 10 - 3 - 1 free.
  REQUIRE(c.s->TaskUsage(s, t.task, 3 * kGB, 1).ok());
  c.s->UpdateDeviceMemory(0, 6 * kGB, 10 * kGB, 1);
  CHECK(c.Available(0) == 5 * kGB);  // 6 free - 1 GB still unallocated
  const auto big = c.Begin(s, Request(12 * kGB), 1);
  CHECK(big.gpu == -1);
  // The other program exits: NVML frees 6 GB, the waiting task still does not fit (capacity:
  // 16 - 4 - 1 = 11 < 12) until ours ends.
  c.s->UpdateDeviceMemory(0, 12 * kGB, 4 * kGB, 2);
  CHECK(c.sink.PlacedOn(big.task) == -1);
  REQUIRE(c.s->TaskEnd(s, t.task, 3).ok());
  c.s->UpdateDeviceMemory(0, 15 * kGB, kGB, 3);  // its memory is freed; the context stays
  CHECK(c.sink.PlacedOn(big.task) == 0);
}

// ---- grow liveness: tasks waiting to grow must not wait for each other forever -----------------

namespace {

size_t CountEvents(const RecordingSink &sink, core::EventKind kind, core::TaskId task) {
  size_t n = 0;
  for (const core::Event &e : sink.events) n += e.kind == kind && e.task == task;
  return n;
}

}  // namespace

TEST_CASE("two tasks growing into each other's room: exactly one fails, the other is granted after",
          "[core][memory][grow]") {
  Core c(Gpus(1, 16 * kGB), "mgb", kGB);
  const auto s1 = c.Open(), s2 = c.Open();
  const auto a = c.Begin(s1, Request(6 * kGB));
  const auto b = c.Begin(s2, Request(6 * kGB));  // 6 + 6 + 2 contexts: 2 GB free
  REQUIRE((a.gpu == 0 && b.gpu == 0));
  // a waits: b's end would give it room (16 - 2 - 6 = 8 >= 4).
  auto first = c.s->TaskGrow(s1, a.task, 4 * kGB, 0, 1);
  REQUIRE(first.ok());
  CHECK_FALSE(first->grown);
  // b waiting too would leave room for neither, even after every other task ended
  // (16 - 2 - 12 = 2 < 4): b, the youngest, fails at once; a keeps waiting.
  auto second = c.s->TaskGrow(s2, b.task, 4 * kGB, 0, 2);
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == absl::StatusCode::kResourceExhausted);
  const std::string message(second.status().message());
  INFO(message);
  CHECK(message.find("task " + std::to_string(b.task)) != std::string::npos);
  CHECK(message.find("GPU 0 (g0") != std::string::npos);
  CHECK(message.find(std::to_string(4 * kGB) + " bytes") != std::string::npos);
  CHECK(c.s->Status().gpus[0].memory_reserved == 14 * kGB);  // the refusal changed nothing
  CHECK_FALSE(c.sink.Has(core::EventKind::kTaskGrown, a.task));
  CHECK_FALSE(c.sink.Has(core::EventKind::kTaskCancelled, a.task));
  // b's program sees an allocation error and ends its task: a's grow goes through.
  REQUIRE(c.s->TaskEnd(s2, b.task, 3).ok());
  CHECK(CountEvents(c.sink, core::EventKind::kTaskGrown, a.task) == 1);
  CHECK(c.s->Status().gpus[0].memory_reserved == 10 * kGB + 2 * kGB);
}

TEST_CASE("a waiting grow that a running task's end will satisfy is not failed",
          "[core][memory][grow]") {
  Core c(Gpus(1, 16 * kGB), "mgb");
  const auto s = c.Open();
  const auto a = c.Begin(s, Request(6 * kGB));
  const auto b = c.Begin(s, Request(6 * kGB));
  const auto holder = c.Begin(s, Request(3 * kGB));  // 1 GB free
  REQUIRE(c.s->TaskGrow(s, a.task, 4 * kGB, 0, 1).ok());
  // Both wait; holder's end alone gives room for the oldest (16 - 12 = 4 >= 4): not hopeless.
  auto second = c.s->TaskGrow(s, b.task, 2 * kGB, 0, 2);
  REQUIRE(second.ok());
  CHECK_FALSE(second->grown);
  c.s->UpdateDeviceMemory(0, 0, 0, 3);  // an event that re-checks: still nothing fails
  CHECK_FALSE(c.sink.Has(core::EventKind::kTaskCancelled, a.task));
  CHECK_FALSE(c.sink.Has(core::EventKind::kTaskCancelled, b.task));
  REQUIRE(c.s->TaskEnd(s, holder.task, 4).ok());  // 4 GB free: a first (FIFO)
  CHECK(c.sink.Has(core::EventKind::kTaskGrown, a.task));
  CHECK_FALSE(c.sink.Has(core::EventKind::kTaskGrown, b.task));
  CHECK_FALSE(c.sink.Has(core::EventKind::kTaskCancelled, b.task));  // a's end will serve it
  REQUIRE(c.s->TaskEnd(s, a.task, 5).ok());
  CHECK(c.sink.Has(core::EventKind::kTaskGrown, b.task));
  CHECK(c.s->waiting_count() == 0);
}

TEST_CASE("a grow that fits is granted past an older waiting grow when waiting would deadlock",
          "[core][memory][grow]") {
  Core c(Gpus(1, 16 * kGB), "mgb");
  const auto s = c.Open();
  const auto a = c.Begin(s, Request(6 * kGB));
  const auto b = c.Begin(s, Request(5 * kGB));         // 5 GB free
  auto big = c.s->TaskGrow(s, a.task, 8 * kGB, 0, 1);  // waits for b (16 - 6 = 10 >= 8)
  REQUIRE(big.ok());
  REQUIRE_FALSE(big->grown);
  // b's 2 GB fit now. Queued behind a it would hold its 5 GB and leave a hopeless (16 - 11 < 8).
  auto small = c.s->TaskGrow(s, b.task, 2 * kGB, 0, 2);
  REQUIRE(small.ok());
  CHECK(small->grown);
  REQUIRE(c.s->TaskEnd(s, b.task, 3).ok());  // 10 GB free
  CHECK(c.sink.Has(core::EventKind::kTaskGrown, a.task));
}

TEST_CASE("a new session's context never takes the room waiting grows need: it waits behind them",
          "[core][memory][grow]") {
  Core c(Gpus(1, 16 * kGB), "mgb", kGB);
  const auto s1 = c.Open(), s2 = c.Open(), s3 = c.Open(), s4 = c.Open();
  const auto a = c.Begin(s1, Request(5 * kGB));
  const auto b = c.Begin(s2, Request(5 * kGB));
  c.Begin(s3, Request(2 * kGB));                           // 12 + 3 contexts: 1 GB free
  REQUIRE(c.s->TaskGrow(s1, a.task, 3 * kGB, 0, 1).ok());  // room 16 - 3 - 5 = 8
  auto waits = c.s->TaskGrow(s2, b.task, 3 * kGB, 0, 2);   // room 16 - 3 - 10 = 3: just enough
  REQUIRE(waits.ok());
  REQUIRE_FALSE(waits->grown);
  // A fourth session's first task would take the last 1 GB for its context and leave room 2 < 3
  // for the grows: it waits instead, and no grow fails.
  const auto newcomer = c.Begin(s4, Request(0), 3);
  CHECK(newcomer.gpu == -1);
  CHECK_FALSE(c.sink.Has(core::EventKind::kTaskCancelled, a.task));
  CHECK_FALSE(c.sink.Has(core::EventKind::kTaskCancelled, b.task));
  REQUIRE(c.s->CloseSession(s3, 4).ok());                  // its task and context: 4 GB free
  CHECK(c.sink.Has(core::EventKind::kTaskGrown, a.task));  // 1 GB left: b's grow still waits
  CHECK(c.sink.PlacedOn(newcomer.task) == -1);             // and the newcomer behind it
  REQUIRE(c.s->CloseSession(s1, 5).ok());                  // 8 + 1 GB more: 10 free
  CHECK(c.sink.Has(core::EventKind::kTaskGrown, b.task));
  CHECK(c.sink.PlacedOn(newcomer.task) == 0);
}

TEST_CASE("a task is not placed into the room a waiting grow waits for: it goes elsewhere or waits",
          "[core][memory][grow]") {
  Core c(Gpus(2, 16 * kGB), "mgb");
  const auto a = c.BeginSolo(Request(6 * kGB));   // g0
  const auto b = c.BeginSolo(Request(12 * kGB));  // g1
  const auto d = c.BeginSolo(Request(6 * kGB));   // g0: 4 free
  REQUIRE(a.gpu == 0);
  REQUIRE(b.gpu == 1);
  REQUIRE(d.gpu == 0);
  const auto grow = c.s->TaskGrow(a.session, a.task, 6 * kGB, 0, 1);  // 4 free on g0: waits
  REQUIRE(grow.ok());
  REQUIRE_FALSE(grow->grown);
  // 3 GB fits g0's 4 free by itself, but that is the grow's room: it goes to g1 (4 free).
  CHECK(c.BeginSolo(Request(3 * kGB), 2).gpu == 1);
  // 2 GB fits nowhere without taking the grow's room: it waits.
  const auto late = c.BeginSolo(Request(2 * kGB), 3);
  CHECK(late.gpu == -1);
  REQUIRE(c.s->TaskEnd(b.session, b.task, 4).ok());  // g1 frees 12: the waiter goes there
  CHECK(c.sink.PlacedOn(late.task) == 1);
  CHECK_FALSE(c.sink.Has(core::EventKind::kTaskGrown, a.task));  // g0 still has only 4 free
  REQUIRE(c.s->TaskEnd(d.session, d.task, 5).ok());
  CHECK(c.sink.Has(core::EventKind::kTaskGrown, a.task));
}

namespace {

// Two tasks fill a 16 GB GPU with NVML by mgbd's accounting (6 + 6 + two 1 GB contexts), both
// fully allocated at time 1, while NVML shows only 1 GB free (contexts and rounding past the
// accounting): each then asks 1.5 GB, which fits the accounting's 2 GB but not NVML's 1 GB.
struct TwoGrowersOnAFullGpu {
  Core c;
  core::SessionId s1, s2;
  core::BeginResult a, b;
  TwoGrowersOnAFullGpu() : c(NvmlGpu(), "mgb", kGB), s1(c.Open()), s2(c.Open()) {
    a = c.Begin(s1, Request(6 * kGB));
    b = c.Begin(s2, Request(6 * kGB));
    REQUIRE((a.gpu == 0 && b.gpu == 0));
    REQUIRE(c.s->TaskUsage(s1, a.task, 6 * kGB, 1).ok());
    REQUIRE(c.s->TaskUsage(s2, b.task, 6 * kGB, 1).ok());
    c.s->UpdateDeviceMemory(0, kGB, 15 * kGB, 1);
    auto first = c.s->TaskGrow(s1, a.task, 3 * kGB / 2, 0, 2);
    REQUIRE(first.ok());
    REQUIRE_FALSE(first->grown);  // b's end would give room: it waits
  }
  static std::vector<core::GpuSpec> NvmlGpu() {
    auto gpus = Gpus(1, 16 * kGB);
    gpus[0].has_nvml = true;
    return gpus;
  }
};

}  // namespace

TEST_CASE("grows that fit only by the accounting fail the youngest once NVML has settled",
          "[core][memory][grow]") {
  TwoGrowersOnAFullGpu f;
  Core &c = f.c;
  // b waiting too: by the accounting 16 - 2 - 12 = 2 GB >= 1.5 would still come (NVML's reading
  // is not trusted yet: usage reports came at time 1), so it waits.
  auto second = c.s->TaskGrow(f.s2, f.b.task, 3 * kGB / 2, 0, 3);
  REQUIRE(second.ok());
  REQUIRE_FALSE(second->grown);
  c.s->UpdateDeviceMemory(0, kGB, 15 * kGB, 2'000'000);  // too soon after the last change
  CHECK_FALSE(c.sink.Has(core::EventKind::kTaskCancelled, f.b.task));
  // A settled reading still shows 1 GB: nothing on the GPU can end to make room. Without this
  // rule both wait forever (the 2x H200 evaluation: 100 s, until an unrelated event).
  c.s->UpdateDeviceMemory(0, kGB, 15 * kGB, 4'000'000);
  const core::Event *failed = nullptr;
  for (const core::Event &e : c.sink.events) {
    if (e.kind == core::EventKind::kTaskCancelled && e.is_grow) failed = &e;
  }
  REQUIRE(failed != nullptr);
  CHECK(failed->task == f.b.task);  // the youngest
  CHECK(failed->reason == core::CancelReason::kNoRoom);
  CHECK_FALSE(c.sink.Has(core::EventKind::kTaskCancelled, f.a.task));
  // b's program ends; once NVML shows its memory freed, a's grow goes through.
  REQUIRE(c.s->CloseSession(f.s2, 4'000'001).ok());
  CHECK_FALSE(c.sink.Has(core::EventKind::kTaskGrown, f.a.task));
  c.s->UpdateDeviceMemory(0, 8 * kGB, 8 * kGB, 4'100'000);
  CHECK(c.sink.Has(core::EventKind::kTaskGrown, f.a.task));
}

// Issue 33 on 2x H100: `mgb run` repeats its usage report every 2 s; each counted as a change,
// NVML never settled, and six programs waited to grow on one GPU for 300 s.
TEST_CASE("usage reports that change nothing do not keep NVML from settling",
          "[core][memory][grow]") {
  TwoGrowersOnAFullGpu f;
  Core &c = f.c;
  auto second = c.s->TaskGrow(f.s2, f.b.task, 3 * kGB / 2, 0, 3);
  REQUIRE(second.ok());
  REQUIRE_FALSE(second->grown);
  for (core::Micros at : {1'000'000, 2'000'000, 3'000'000}) {  // the same bytes, again and again
    for (auto [session, task] : {std::pair{f.s1, f.a.task}, std::pair{f.s2, f.b.task}}) {
      auto changed = c.s->TaskUsage(session, task, 6 * kGB, at);
      REQUIRE(changed.ok());
      CHECK_FALSE(*changed);  // nothing for mgbd to read NVML again for
    }
  }
  c.s->UpdateDeviceMemory(0, kGB, 15 * kGB, 3'500'000);
  CHECK(c.sink.Has(core::EventKind::kTaskCancelled, f.b.task));  // the youngest grow fails
}

TEST_CASE("a grow asked when NVML has settled on a full GPU is refused at once",
          "[core][memory][grow]") {
  TwoGrowersOnAFullGpu f;
  Core &c = f.c;
  c.s->UpdateDeviceMemory(0, kGB, 15 * kGB, 4'000'000);  // settled: a alone still may wait on b
  CHECK_FALSE(c.sink.Has(core::EventKind::kTaskCancelled, f.a.task));
  auto second = c.s->TaskGrow(f.s2, f.b.task, 3 * kGB / 2, 0, 4'000'001);
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK_FALSE(c.sink.Has(core::EventKind::kTaskCancelled, f.a.task));
}

TEST_CASE("a grow beyond the GPU beside the task's own reservation and context fails at once",
          "[core][memory][grow]") {
  Core c(Gpus(1, 16 * kGB), "mgb", kGB);
  const auto s = c.Open();
  const auto a = c.Begin(s, Request(10 * kGB));
  auto too_big = c.s->TaskGrow(s, a.task, 5 * kGB + 1, 0, 1);  // 10 + 1 + 5 GB + 1 byte > 16
  REQUIRE_FALSE(too_big.ok());
  CHECK(too_big.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(too_big.status().message()).find("context reserve") != std::string::npos);
  auto fits = c.s->TaskGrow(s, a.task, 5 * kGB, 0, 2);
  REQUIRE(fits.ok());
  CHECK(fits->grown);
}

// The context rule: 200 sessions whose first tasks are small would otherwise seat ~30 contexts per
// 16 GiB GPU (97% of it), after which none of their 3 GiB second tasks fits and nothing ever ends.
TEST_CASE("context reserves never starve the queue: 200 sessions of small then large tasks drain",
          "[core][memory]") {
  constexpr uint64_t kReserve = 528ull << 20;
  for (const char *policy : {"mgb", "memory", "mgb-sm"}) {
    INFO(policy);
    Core c(Gpus(2, 16 * kGB), policy, kReserve);
    const std::vector<uint64_t> plan = {256ull << 20, 3 * kGB, 256ull << 20};
    struct Job {
      core::SessionId session;
      size_t next = 0;        // index into plan of the next task to begin
      core::TaskId task = 0;  // outstanding task, 0 if none
      bool done = false;
    };
    std::vector<Job> jobs;
    for (int i = 0; i < 200; ++i) jobs.push_back({c.Open()});
    size_t seen = 0;  // events already read
    std::set<core::TaskId> placed;
    int tick = 0;
    size_t finished = 0;
    for (; tick < 5000 && finished < jobs.size(); ++tick) {
      const core::Micros now = tick * 1000;
      // Tasks placed by an earlier tick end now; their sessions go on or close.
      std::set<core::TaskId> ending = placed;
      for (Job &j : jobs) {
        if (j.done) continue;
        if (j.task != 0 && ending.count(j.task) != 0) {
          REQUIRE(c.s->TaskEnd(j.session, j.task, now).ok());
          placed.erase(j.task);
          j.task = 0;
        }
        if (j.task == 0 && j.next == plan.size()) {
          REQUIRE(c.s->CloseSession(j.session, now).ok());
          j.done = true;
          ++finished;
        } else if (j.task == 0) {
          j.task = c.Begin(j.session, Request(plan[j.next++]), now).task;
        }
      }
      for (; seen < c.sink.events.size(); ++seen) {
        const core::Event &e = c.sink.events[seen];
        if (e.kind == core::EventKind::kTaskPlaced) placed.insert(e.task);
      }
      for (const core::GpuSnapshot &g : c.s->Status().gpus) {
        CHECK(g.sessions * kReserve <=
              g.spec.memory_bytes / 2);  // the rule's bound holds throughout
      }
    }
    CHECK(finished == jobs.size());
    CHECK(tick < 5000);
  }
}

}  // namespace mgb::test
