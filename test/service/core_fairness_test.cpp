// The wait queue: FIFO, the blocked head reserves one GPU, backfilling on the others, release
// places waiters at once, deadlines.
#include <deque>

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
    CHECK(small.gpu == -1);  // the only GPU is reserved by the big task: it queues behind
    REQUIRE(c.s->TaskEnd(s, running.front(), steps).ok());
    running.pop_front();
  }
  CHECK(c.sink.PlacedOn(big.task) == 0);
  CHECK(steps == 2);  // placed as soon as two smalls had ended (16 - 4 >= 10)
  // The smalls that queued behind it keep FIFO order and were placed as room allowed.
  CHECK(c.s->waiting_count() == 2);
}

TEST_CASE("backfilling: younger tasks pass the blocked head only on other GPUs", "[core][fairness]") {
  Core c(Gpus(2, 16 * kGB), "mgb");
  const auto s = c.Open();
  const auto a = c.Begin(s, Request(10 * kGB));  // g0
  const auto b = c.Begin(s, Request(8 * kGB));   // g1 (fewer warps: tie -> lower index? g0 has 1)
  REQUIRE(a.gpu == 0);
  REQUIRE(b.gpu == 1);
  const auto big = c.Begin(s, Request(12 * kGB));
  REQUIRE(big.gpu == -1);
  // The head reserves the GPU with most available memory among those able to hold it: g1 (8 free).
  const auto small1 = c.Begin(s, Request(4 * kGB));
  CHECK(small1.gpu == 0);  // g0 has 6 GB free and is not reserved: backfilled
  const auto small2 = c.Begin(s, Request(4 * kGB));
  CHECK(small2.gpu == -1);  // g0 is full now and g1 (8 GB free) is reserved
  REQUIRE(c.s->TaskEnd(s, b.task, 1).ok());  // g1 frees: the head goes first
  CHECK(c.sink.PlacedOn(big.task) == 1);
  CHECK(c.sink.PlacedOn(small2.task) == 1);  // and the next fits beside it (16 - 12 = 4)
}

TEST_CASE("the blocked head still takes whichever GPU frees first", "[core][fairness]") {
  Core c(Gpus(2, 16 * kGB), "mgb");
  const auto s = c.Open();
  const auto a = c.Begin(s, Request(12 * kGB));  // g0: 4 free
  const auto b = c.Begin(s, Request(10 * kGB));  // g1: 6 free
  const auto big = c.Begin(s, Request(14 * kGB));  // reserves g1 (most free)
  REQUIRE(big.gpu == -1);
  REQUIRE(c.s->TaskEnd(s, a.task, 1).ok());  // g0 now has 16 free: the head is placed there
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

}  // namespace mgb::test
