// First runs (issue 33): programs without a learned peak (provisional tasks) do not grow side by
// side on one GPU, so that none of them is refused a grow (and dies of out-of-memory) when the
// node could have run them one after the other.
#include <map>
#include <vector>

#include "core_test_support.h"
#include "mgb/core/error_reason.h"

namespace mgb::test {
namespace {

constexpr core::Micros kSecond = 1'000'000;

core::TaskRequest Unknown(uint64_t bytes = kGB) {
  core::TaskRequest r = Request(bytes);
  r.provisional = true;
  return r;
}

core::Options WithSettle(core::Micros settle) {
  core::Options o;
  o.policy = *core::ParsePolicy("mgb");
  o.context_reserve_bytes = 0;
  o.unknown_settle_us = settle;
  return o;
}

// The first run: `jobs` unknown programs start at once on `gpus` GPUs of 80 GB; each
// grows from 1 GB to `peak` in eight steps, one each half second from its start, and ends 24 s
// after its start (later if a grow waited).
// A refused grow is a lost job (the framework raises out-of-memory and the job exits). Returns
// {lost, makespan in s}.
std::pair<int, double> FirstRun(core::Micros settle, int jobs, int gpus, uint64_t peak) {
  Core c(Gpus(gpus, 80 * kGB), WithSettle(settle));
  struct Job {
    core::SessionId session = 0;
    core::TaskId task = 0;
    core::Micros started = -1;
    int grows = 0;
    bool growing = false, done = false;
  };
  std::vector<Job> all(jobs);
  for (Job &j : all) {
    j.session = c.Open();
    const core::BeginResult b = c.Begin(j.session, Unknown(), 0);
    j.task = b.task;
    if (b.gpu >= 0) j.started = 0;
  }
  constexpr int kSteps = 8;
  const uint64_t step = (peak - kGB) / kSteps;
  int lost = 0, finished = 0;
  core::Micros now = 0;
  size_t seen = 0;
  // Placements, grows and failed waiting grows since the last look. A grow failed while waiting
  // (hopeless) is a lost job too.
  auto catch_up = [&] {
    for (; seen < c.sink.events.size(); ++seen) {
      const core::Event e = c.sink.events[seen];
      for (Job &j : all) {
        if (j.task != e.task || j.done) continue;
        if (e.kind == core::EventKind::kTaskPlaced && j.started < 0) j.started = now;
        if (e.kind == core::EventKind::kTaskGrown) j.growing = false;
        if (e.kind == core::EventKind::kTaskCancelled && e.is_grow) {
          ++lost;
          j.done = true;
          REQUIRE(c.s->CloseSession(j.session, now).ok());
        }
      }
    }
  };
  for (; finished + lost < jobs && now < 600 * kSecond; now += kSecond / 10) {
    c.s->ExpireDeadlines(now);
    catch_up();
    for (Job &j : all) {
      if (j.started < 0 || j.done || j.growing) continue;
      if (j.grows < kSteps && now >= j.started + (j.grows + 1) * kSecond / 2) {
        auto grown = c.s->TaskGrow(j.session, j.task, step, 0, now);
        if (!grown.ok()) {
          REQUIRE(core::ReasonOf(grown.status()) == core::ErrorReason::kNoRoom);
          ++lost;
          j.done = true;
          REQUIRE(c.s->CloseSession(j.session, now).ok());
        } else {
          ++j.grows;
          j.growing = !grown->grown;
        }
      } else if (j.grows == kSteps && now >= j.started + 24 * kSecond) {
        REQUIRE(c.s->CloseSession(j.session, now).ok());
        j.done = true;
        ++finished;
      }
      catch_up();
    }
  }
  return {lost, static_cast<double>(now) / kSecond};
}

}  // namespace

TEST_CASE(
    "first run of three 44 GB programs on two 80 GB GPUs: lost without the rule, none with it",
    "[core][first-runs]") {
  const auto [lost_without, makespan_without] = FirstRun(0, 3, 2, 44 * kGB);
  CHECK(lost_without == 1);  // the measurement: two grew side by side on one GPU
  const auto [lost_with, makespan_with] = FirstRun(5 * kSecond, 3, 2, 44 * kGB);
  CHECK(lost_with == 0);
  // The third starts once a GPU's first run settled (4 s + 5 s) and finishes its growth when that
  // one ends (24 s): 24 s + 9 s + 24 s at most.
  CHECK(makespan_with < 60);
}

TEST_CASE("first runs that fit side by side still share a GPU, one growing at a time",
          "[core][first-runs]") {
  // Four 30 GB programs on two GPUs: two per GPU fit. The second on a GPU starts once the first
  // has been quiet for the settle time (its 4 s of growth + 5 s), not after it ends.
  const auto [lost, makespan] = FirstRun(5 * kSecond, 4, 2, 30 * kGB);
  CHECK(lost == 0);
  CHECK(makespan < 40);  // 9 s + 24 s, not 2 x 24 s
}

TEST_CASE("a program without a learned peak goes where no other one is growing",
          "[core][first-runs]") {
  Core c(Gpus(2, 80 * kGB), WithSettle(5 * kSecond));
  const auto a = c.BeginSolo(Unknown(), 0);
  const auto b = c.BeginSolo(Unknown(), 0);
  CHECK(a.gpu == 0);
  CHECK(b.gpu == 1);  // fewest warps would tie on GPU 0; GPU 0 has a growing first run
  const auto waits = c.BeginSolo(Unknown(), 0);
  CHECK(waits.gpu == -1);
  // Nor behind the queue's head, in the room it reserves (seen on 2x H100: five first runs went
  // into the head's shadow on GPU 0, beside a growing one).
  const auto behind = c.BeginSolo(Unknown(), 0);
  CHECK(behind.gpu == -1);
  // A program with a learned peak is not held back.
  const auto known = c.BeginSolo(Request(10 * kGB), 0);
  CHECK(known.gpu >= 0);
  // b allocates at once and never grows; a grows at 1 s and 3 s (its quiet time restarts): b's
  // GPU opens first, 5 s after b's first allocation.
  REQUIRE(c.s->TaskUsage(b.session, b.task, kGB / 2, 0).ok());
  REQUIRE(c.s->TaskGrow(a.session, a.task, 10 * kGB, 0, 1 * kSecond).ok());
  REQUIRE(c.s->TaskGrow(a.session, a.task, 10 * kGB, 0, 3 * kSecond).ok());
  REQUIRE(c.s->NextDeadline().has_value());
  CHECK(*c.s->NextDeadline() == 5 * kSecond);
  c.s->ExpireDeadlines(4 * kSecond);
  CHECK(c.sink.PlacedOn(waits.task) == -1);
  c.s->ExpireDeadlines(5 * kSecond);
  CHECK(c.sink.PlacedOn(waits.task) == 1);
}

// Seen on 2x H100: PyTorch and JAX take 5-10 s to import before their first allocation, so a
// first run that had not allocated yet counted as settled and the next one joined it.
TEST_CASE("a first run that has not allocated yet counts as growing, for at most a minute",
          "[core][first-runs]") {
  Core c(Gpus(1, 80 * kGB), WithSettle(5 * kSecond));
  const auto importing = c.BeginSolo(Unknown(), 0);
  REQUIRE(importing.gpu == 0);
  const auto next = c.BeginSolo(Unknown(), 0);
  REQUIRE(next.gpu == -1);
  c.s->ExpireDeadlines(8 * kSecond);
  CHECK(c.sink.PlacedOn(next.task) == -1);  // 8 s in, still importing
  REQUIRE(c.s->TaskUsage(importing.session, importing.task, kGB / 2, 9 * kSecond).ok());
  c.s->ExpireDeadlines(13 * kSecond);
  CHECK(c.sink.PlacedOn(next.task) == -1);  // quiet for 4 s since its first allocation
  c.s->ExpireDeadlines(14 * kSecond);
  CHECK(c.sink.PlacedOn(next.task) == 0);
  // One that never allocates holds others back for a minute at most.
  const auto idle = c.BeginSolo(Unknown(), 20 * kSecond);
  REQUIRE(idle.gpu == -1);  // `next` is growing (placed at 14 s, nothing allocated)
  c.s->ExpireDeadlines(73 * kSecond);
  CHECK(c.sink.PlacedOn(idle.task) == -1);
  c.s->ExpireDeadlines(74 * kSecond);
  CHECK(c.sink.PlacedOn(idle.task) == 0);
}

TEST_CASE("a first run waiting to grow still counts as growing", "[core][first-runs]") {
  Core c(Gpus(1, 80 * kGB), WithSettle(5 * kSecond));
  const auto full = c.BeginSolo(Request(60 * kGB), 0);  // known, holds most of the GPU
  const auto a = c.BeginSolo(Unknown(), 0);
  REQUIRE(a.gpu == 0);
  auto grow = c.s->TaskGrow(a.session, a.task, 30 * kGB, 0, 1 * kSecond);
  REQUIRE(grow.ok());
  CHECK_FALSE(grow->grown);  // waits for `full` to end
  const auto b = c.BeginSolo(Unknown(), 2 * kSecond);
  CHECK(b.gpu == -1);
  c.s->ExpireDeadlines(30 * kSecond);  // long past a's settle time, but its grow still waits
  CHECK(c.sink.PlacedOn(b.task) == -1);
  REQUIRE(c.s->TaskEnd(full.session, full.task, 31 * kSecond).ok());  // a grows now
  c.s->ExpireDeadlines(35 * kSecond);
  CHECK(c.sink.PlacedOn(b.task) == -1);  // 4 s after its grow
  c.s->ExpireDeadlines(36 * kSecond);
  CHECK(c.sink.PlacedOn(b.task) == 0);
}

TEST_CASE("the first-run rule is off at settle 0 and under single / cg:N", "[core][first-runs]") {
  Core off(Gpus(1, 80 * kGB), WithSettle(0));
  CHECK(off.BeginSolo(Unknown(), 0).gpu == 0);
  CHECK(off.BeginSolo(Unknown(), 0).gpu == 0);
  core::Options cg = WithSettle(5 * kSecond);
  cg.policy = *core::ParsePolicy("cg:2");
  Core shared(Gpus(1, 80 * kGB), cg);
  CHECK(shared.BeginSolo(Unknown(), 0).gpu == 0);
  CHECK(shared.BeginSolo(Unknown(), 0).gpu == 0);
}

}  // namespace mgb::test
