// The event loop over the real core: exact single-assignment makespans, memory safety under mgb,
// out-of-memory deaths under memory-blind cg:N, growing reservations, determinism.
#include <catch2/catch.hpp>

#include "run_report.h"
#include "sim_test_util.h"
#include "simulator.h"
#include "trace_generator.h"
#include "trace_json.h"

using namespace mgb::sim;
using namespace mgb::sim::test;

namespace {

Trace FourEqualJobs() {
  // Each job: 1 s host, 10 s task, 2 s host = 13 s alone.
  Trace trace;
  for (int i = 0; i < 4; ++i)
    trace.jobs.push_back(OneTaskJob("j" + std::to_string(i), 1, 10, 2, 10 * kGiB));
  return trace;
}

SimResult Run(const Trace &trace, const SimOptions &options) {
  auto result = Simulate(trace, options);
  REQUIRE(result.ok());
  return *result;
}

size_t Count(const SimResult &r, JobOutcome outcome) {
  size_t n = 0;
  for (const JobRecord &j : r.jobs) n += j.outcome == outcome;
  return n;
}

}  // namespace

TEST_CASE("single-assignment with one worker per GPU: makespan is two jobs back to back", "[sim]") {
  const SimResult r = Run(FourEqualJobs(), Node(2, 80 * kGiB, "single", 2));
  CHECK(Makespan(r) == Approx(26.0).epsilon(1e-9));  // 2 rounds of 13 s
  CHECK(Count(r, JobOutcome::kCompleted) == 4);
}

TEST_CASE("single-assignment with spare workers: later jobs overlap their host phase", "[sim]") {
  // All four start at 0 and finish their 1 s host phase; two get GPUs at t=1 and hold them until
  // their process ends at 13 (single assignment: a session owns its GPU until it ends); the other
  // two run 13 -> 23 on the GPU, then 2 s host: makespan 25.
  const SimResult r = Run(FourEqualJobs(), Node(2, 80 * kGiB, "single", 4));
  CHECK(Makespan(r) == Approx(25.0).epsilon(1e-9));
  const mgb::batch::Summary s = SummaryOf(r);
  CHECK(s.mean_turnaround_s == Approx((13.0 + 13.0 + 25.0 + 25.0) / 4).epsilon(1e-9));
  double gpu_wait = 0;
  for (const JobRecord &j : r.jobs) gpu_wait += j.gpu_wait_s;
  CHECK(gpu_wait == Approx(24.0).epsilon(1e-9));  // 0, 0, 12, 12
}

TEST_CASE("mgb co-runs tasks and the slowdown model stretches them", "[sim]") {
  // Two tasks that each fill every SM (busy 1, occupancy 1) on one GPU share it: U = 2, and with
  // interference 0.1 each runs at 1 / (2 * 1.1); both end at 10 * 2.2 = 22 s.
  Trace trace;
  trace.jobs.push_back(OneTaskJob("a", 0, 10, 0, 10 * kGiB));
  trace.jobs.push_back(OneTaskJob("b", 0, 10, 0, 10 * kGiB));
  SimOptions options = Node(1, 80 * kGiB, "mgb", 0);
  options.model.interference = 0.1;
  const SimResult r = Run(trace, options);
  CHECK(r.jobs[0].ended_s == Approx(22.0));
  CHECK(r.jobs[1].ended_s == Approx(22.0));
  CHECK(r.mean_sm_busy[0] == Approx(1.0));
}

TEST_CASE("a half-busy task next to a full one", "[sim]") {
  // busy 0.5 + busy 1.0, full occupancy: U = 1.5, no interference. Rates: a (b=.5): 1/(.5+.75)=.8,
  // b (b=1): 1/1.5. a ends at 10/.8 = 12.5 having let b do 12.5/1.5 = 8.333 s of work; b then runs
  // alone: 1.667 s more. b ends at 14.1667.
  Trace trace;
  trace.jobs.push_back(OneTaskJob("a", 0, 10, 0, kGiB, 0.5));
  trace.jobs.push_back(OneTaskJob("b", 0, 10, 0, kGiB, 1.0));
  SimOptions options = Node(1, 80 * kGiB, "mgb", 0);
  options.model.interference = 0.0;
  const SimResult r = Run(trace, options);
  CHECK(r.jobs[0].ended_s == Approx(12.5));
  CHECK(r.jobs[1].ended_s == Approx(12.5 + (10 - 12.5 / 1.5)));
}

TEST_CASE("memory is never exceeded under mgb, while cg:N kills big jobs", "[sim]") {
  GeneratorOptions g;
  g.jobs = 32;
  g.large_per_small = 5;
  g.small_share = 1;
  g.gpu_memory_bytes = 141 * kGiB;
  g.seed = 3;
  const Trace trace = GenerateTrace(g);
  for (const char *policy : {"mgb", "mgb-sm", "memory", "single"}) {
    const SimResult r = Run(trace, Node(2, 141 * kGiB, policy, 12));
    INFO(policy);
    CHECK(Count(r, JobOutcome::kOutOfMemory) == 0);
    CHECK(Count(r, JobOutcome::kCompleted) == trace.jobs.size());
    for (const UtilisationSample &s : r.utilisation) {
      for (double used : s.memory_used) CHECK(used <= 1.0);
    }
  }
  const SimResult blind = Run(trace, Node(2, 141 * kGiB, "cg:6", 12));
  CHECK(Count(blind, JobOutcome::kOutOfMemory) > 0);
  for (const JobRecord &j : blind.jobs) {
    if (j.outcome == JobOutcome::kOutOfMemory)
      CHECK(j.error.find("out of memory") != std::string::npos);
  }
}

TEST_CASE("two jobs that together overflow a GPU: cg:2 kills the second, mgb serialises", "[sim]") {
  Trace trace;
  trace.jobs.push_back(OneTaskJob("big1", 0, 10, 0, 60 * kGiB));
  trace.jobs.push_back(OneTaskJob("big2", 0.5, 10, 0, 60 * kGiB));
  const SimResult blind = Run(trace, Node(1, 100 * kGiB, "cg:2", 0));
  CHECK(blind.jobs[0].outcome == JobOutcome::kCompleted);
  CHECK(blind.jobs[1].outcome == JobOutcome::kOutOfMemory);
  CHECK(blind.jobs[1].ended_s == Approx(0.5));
  const SimResult safe = Run(trace, Node(1, 100 * kGiB, "mgb", 0));
  CHECK(safe.jobs[1].outcome == JobOutcome::kCompleted);
  CHECK(safe.jobs[1].ended_s == Approx(20.0));  // waits for big1 (ends at 10), then runs 10 s
  CHECK(safe.jobs[1].gpu_wait_s == Approx(9.5));
}

TEST_CASE("a task that allocates past its reservation grows it through the core", "[sim]") {
  // Asks 10 GiB, really reaches 30 GiB at half way: under mgb the guard grows the reservation;
  // a second job of 60 GiB holds the GPU, so the grow waits until that job ends.
  Trace trace;
  JobProfile grower = OneTaskJob("grower", 0, 10, 0, 10 * kGiB);
  grower.tasks[0].memory = {{0.0, 10 * kGiB}, {0.5, 30 * kGiB}};
  trace.jobs.push_back(grower);
  trace.jobs.push_back(OneTaskJob("holder", 1, 20, 0, 60 * kGiB, 0.0));
  SimOptions options = Node(1, 80 * kGiB, "mgb", 0);
  options.context_bytes = 0;
  options.core.context_reserve_bytes = 0;
  options.model.interference = 0.0;
  const SimResult r = Run(trace, options);
  CHECK(r.jobs[0].outcome == JobOutcome::kCompleted);
  // holder (busy 0: no SM demand) runs 1 -> 21; grower reaches 50% at 5 s, waits for the 20 GiB
  // it lacks until 21, then runs its last 5 s: ends at 26.
  CHECK(r.jobs[0].ended_s == Approx(26.0));
}

TEST_CASE("two jobs growing into each other's room: one dies of out-of-memory, not both stuck",
          "[sim]") {
  // Each asks 30 GiB of an 80 GiB GPU and reaches 60 GiB half way: each growth needs what the
  // other holds. mgbd refuses the younger growth for good (docs/service.md, "Grow liveness"),
  // libmgb fails that allocation, the job dies alone, and the other grows and finishes.
  Trace trace;
  for (const char *name : {"first", "second"}) {
    JobProfile job = OneTaskJob(name, 0, 10, 0, 30 * kGiB);
    job.tasks[0].memory = {{0.0, 30 * kGiB}, {0.5, 60 * kGiB}};
    trace.jobs.push_back(job);
  }
  SimOptions options = Node(1, 80 * kGiB, "mgb", 0);
  options.context_bytes = 0;
  options.core.context_reserve_bytes = 0;
  const SimResult r = Run(trace, options);
  int completed = 0, out_of_memory = 0;
  for (const JobRecord &job : r.jobs) {
    completed += job.outcome == JobOutcome::kCompleted;
    out_of_memory += job.outcome == JobOutcome::kOutOfMemory;
  }
  CHECK(completed == 1);
  CHECK(out_of_memory == 1);
}

TEST_CASE("the same seed gives the same trace and the same run; another seed differs", "[sim]") {
  GeneratorOptions g;
  g.jobs = 64;
  g.large_per_small = 3;
  g.gpu_memory_bytes = 141 * kGiB;
  g.seed = 42;
  g.mean_arrival_gap_s = 5;
  const Trace a = GenerateTrace(g), b = GenerateTrace(g);
  CHECK(TraceToJson(a) == TraceToJson(b));
  g.seed = 43;
  CHECK(TraceToJson(GenerateTrace(g)) != TraceToJson(a));
  const SimResult ra = Run(a, Node(4, 141 * kGiB, "mgb", 16));
  const SimResult rb = Run(b, Node(4, 141 * kGiB, "mgb", 16));
  CHECK(ReportJson(ra, "x", "t", std::nullopt) == ReportJson(rb, "x", "t", std::nullopt));
}

TEST_CASE("the generator keeps the large:small ratio exactly", "[sim]") {
  GeneratorOptions g;
  g.jobs = 32;
  g.gpu_memory_bytes = 100 * kGiB;
  REQUIRE(ParseMix("3:1", g).ok());
  size_t large = 0;
  for (const JobProfile &job : GenerateTrace(g).jobs)
    large += job.tasks[0].memory_bytes > 25 * kGiB;
  CHECK(large == 24);
  CHECK_FALSE(ParseMix("3", g).ok());
  CHECK_FALSE(ParseMix("0:0", g).ok());
}

TEST_CASE("a task larger than every GPU is rejected by the core, not simulated", "[sim]") {
  Trace trace;
  trace.jobs.push_back(OneTaskJob("huge", 0, 10, 0, 200 * kGiB));
  trace.jobs.push_back(OneTaskJob("fine", 0, 10, 0, 10 * kGiB));
  const SimResult r = Run(trace, Node(2, 80 * kGiB, "mgb", 0));
  CHECK(r.jobs[0].outcome == JobOutcome::kRejected);
  CHECK(r.jobs[1].outcome == JobOutcome::kCompleted);
}
