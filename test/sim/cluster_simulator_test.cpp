// The cluster behind Slurm, on clusters small enough to work out by hand: Slurm's gpumem grants
// never pass a node's total; a job whose grant fits the node but no single GPU waits in mgbd's
// queue (fragmentation) instead of crashing; memory-blind shards crash and count the jobs that
// overflow a GPU; whole GPUs are never shared; the same seed gives the same run.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cluster_report.h"
#include "cluster_simulator.h"
#include "profile_draw.h"
#include "run_report.h"
#include "sim_test_util.h"
#include "trace_generator.h"

using namespace mgb::sim;
using namespace mgb::sim::test;

namespace {

// `count` jobs of one 10 s task (busy 1, filling every SM) holding `memory` from the start, all
// submitted at t = 0.
Trace EqualJobs(int count, uint64_t memory) {
  Trace trace;
  for (int i = 0; i < count; ++i)
    trace.jobs.push_back(OneTaskJob("j" + std::to_string(i), 0, 10, 0, memory));
  return trace;
}

// Nodes of `gpus` x 100 GiB; contexts cost nothing so grants and sizes are round numbers.
ClusterOptions Cluster(size_t nodes, size_t gpus, const std::string &policy) {
  ClusterOptions options;
  options.nodes = nodes;
  options.node = Node(gpus, 100 * kGiB, "mgb", 0);
  options.node.context_bytes = 0;
  options.node.core.context_reserve_bytes = 0;
  auto parsed = ParseClusterPolicy(policy);
  REQUIRE(parsed.ok());
  options.policy = *parsed;
  return options;
}

ClusterResult RunCluster(const Trace &trace, const ClusterOptions &options) {
  auto result = SimulateCluster(trace, options);
  REQUIRE(result.ok());
  return std::move(*result);
}

}  // namespace

TEST_CASE("cluster policies: names, node policies, GRES totals and requests", "[sim][cluster]") {
  JobProfile job = OneTaskJob("a", 0, 10, 0, 60 * kGiB);
  job.tasks[0].memory = {{0.0, 30 * kGiB}, {0.5, 70 * kGiB}};  // peaks above its reservation
  const auto gpus = UniformGpus(8, 100 * kGiB, 132);
  auto mgb = ParseClusterPolicy("mgb");
  REQUIRE(mgb.ok());
  CHECK(mgb->NodePolicy().Name() == "mgb");
  CHECK(mgb->NodeTotal(gpus) == 800 * kGiB);
  CHECK(mgb->JobRequest(job, kGiB) == 71 * kGiB);  // its peak and one context
  auto whole = ParseClusterPolicy("whole-gpu");
  REQUIRE(whole.ok());
  CHECK(whole->NodePolicy().Name() == "single");
  CHECK(whole->NodeTotal(gpus) == 8);
  CHECK(whole->JobRequest(job, kGiB) == 1);
  auto shard = ParseClusterPolicy("shard:4");
  REQUIRE(shard.ok());
  CHECK(shard->Name() == "shard:4");
  CHECK(shard->NodePolicy().Name() == "cg:4");
  CHECK(shard->NodeTotal(gpus) == 32);
  for (const char *bad : {"shard:0", "shard:", "shard:x", "gpu", "single", ""}) {
    CHECK_FALSE(ParseClusterPolicy(bad).ok());
  }
}

TEST_CASE("Slurm never grants a node more gpumem than it has: the fourth job waits in Slurm",
          "[sim][cluster]") {
  // One node of 2 x 100 GiB (gpumem 200 GiB), four 60 GiB jobs at t = 0: Slurm grants three
  // (180 GiB); the fourth would make 240. mgbd runs two at once (one per GPU), queues the third;
  // at t = 10 both end, the third gets a GPU and Slurm starts the fourth on the other.
  const ClusterResult r = RunCluster(EqualJobs(4, 60 * kGiB), Cluster(1, 2, "mgb"));
  CHECK(r.gres_per_node == 200 * kGiB);
  REQUIRE(r.peak_granted.size() == 1);
  CHECK(r.peak_granted[0] == 180 * kGiB);
  CHECK(r.peak_pending == 1);
  const auto &jobs = r.run.jobs;
  REQUIRE(jobs.size() == 4);
  for (int i = 0; i < 3; ++i) CHECK(jobs[i].started_s == 0.0);
  CHECK(jobs[3].started_s == Approx(10.0));
  CHECK(jobs[0].ended_s == Approx(10.0));
  CHECK(jobs[1].ended_s == Approx(10.0));
  CHECK(jobs[2].ended_s == Approx(20.0));
  CHECK(jobs[3].ended_s == Approx(20.0));
  for (const JobRecord &j : jobs) CHECK(j.outcome == JobOutcome::kCompleted);
  const ClusterSummary s = SummariseCluster(r, 0.0);
  CHECK(s.completed == 4);
  CHECK(s.out_of_memory == 0);
  CHECK(s.mean_turnaround_s == Approx((10.0 + 10 + 20 + 20) / 4));
  CHECK(s.throughput_jobs_per_hour == Approx(4 * 3600.0 / 20));
}

TEST_CASE("Slurm's grants stay within every node on a busy drawn workload", "[sim][cluster]") {
  GeneratorOptions generator;
  generator.jobs = 300;
  generator.gpu_memory_bytes = 100 * kGiB;
  generator.mean_arrival_gap_s = 0.5;
  generator.seed = 3;
  const ClusterOptions options = Cluster(3, 2, "mgb");
  const ClusterResult r = RunCluster(GenerateTrace(generator), options);
  REQUIRE(r.peak_granted.size() == 3);
  for (uint64_t peak : r.peak_granted) {
    CHECK(peak <= r.gres_per_node);
    CHECK(peak > r.gres_per_node / 2);  // busy: the check is not vacuous
  }
  CHECK(r.peak_pending > 0);
  for (const JobRecord &j : r.run.jobs) CHECK(j.outcome == JobOutcome::kCompleted);
  for (int node : r.job_node) CHECK((node >= 0 && node < 3));
}

TEST_CASE(
    "fragmentation under mgb: a job whose grant fits the node but no GPU waits, never crashes",
    "[sim][cluster]") {
  // 2 x 100 GiB, three 60 GiB jobs: 180 GiB fits the node's gpumem, so Slurm starts all three at
  // t = 0, but no GPU has room for two. mgbd queues the third until a GPU frees at t = 10.
  const ClusterResult r = RunCluster(EqualJobs(3, 60 * kGiB), Cluster(1, 2, "mgb"));
  const auto &jobs = r.run.jobs;
  REQUIRE(jobs.size() == 3);
  for (const JobRecord &j : jobs) {
    CHECK(j.started_s == 0.0);  // all granted by Slurm at once
    CHECK(j.outcome == JobOutcome::kCompleted);
  }
  CHECK(jobs[2].gpu_wait_s == Approx(10.0));  // waited in mgbd's queue
  CHECK(jobs[2].ended_s == Approx(20.0));
  CHECK(r.peak_granted[0] == 180 * kGiB);

  // The same jobs on memory-blind shards: the third lands on a GPU already holding 60 GiB and dies.
  const ClusterResult shards = RunCluster(EqualJobs(3, 60 * kGiB), Cluster(1, 2, "shard:2"));
  const ClusterSummary s = SummariseCluster(shards, 0.0);
  CHECK(s.completed == 2);
  CHECK(s.out_of_memory == 1);
}

TEST_CASE("shards without memory enforcement crash the jobs that overflow a GPU, and count them",
          "[sim][cluster]") {
  // 2 x 100 GiB, 2 shards each, four 60 GiB jobs: Slurm starts all four (4 shards); every GPU gets
  // two jobs, 120 GiB > 100 GiB: the second on each GPU dies as it allocates.
  const ClusterResult r = RunCluster(EqualJobs(4, 60 * kGiB), Cluster(1, 2, "shard:2"));
  CHECK(r.gres_per_node == 4);
  CHECK(r.peak_granted[0] == 4);
  const ClusterSummary s = SummariseCluster(r, 0.0);
  CHECK(s.completed == 2);
  CHECK(s.out_of_memory == 2);
  CHECK(s.rejected == 0);
  CHECK(s.makespan_s == Approx(10.0));
  CHECK(s.throughput_jobs_per_hour == Approx(2 * 3600.0 / 10));  // crashed jobs are no throughput
  CHECK(s.mean_turnaround_s == Approx(10.0));                    // completed jobs only
  std::vector<int> crashed_gpus;
  for (const JobRecord &j : r.run.jobs) {
    if (j.outcome != JobOutcome::kOutOfMemory) continue;
    CHECK_THAT(j.error, Catch::Contains("out of memory"));
    REQUIRE(j.gpus.size() == 1);
    crashed_gpus.push_back(j.gpus[0]);
  }
  std::sort(crashed_gpus.begin(), crashed_gpus.end());
  CHECK(crashed_gpus == std::vector<int>{0, 1});  // one on each GPU
}

TEST_CASE("whole-GPU allocation never puts two jobs on one GPU", "[sim][cluster]") {
  // By hand: 2 GPUs, three small jobs that would fit together: the third waits in Slurm's queue.
  const ClusterResult three = RunCluster(EqualJobs(3, 10 * kGiB), Cluster(1, 2, "whole-gpu"));
  CHECK(three.run.jobs[2].started_s == Approx(10.0));
  CHECK(three.run.jobs[2].ended_s == Approx(20.0));
  CHECK(three.peak_granted[0] == 2);

  // A busy generated workload on 2 nodes x 2 GPUs: no two jobs hold one GPU at once. A job holds
  // its GPU from its first task's placement (after its first host phase and any wait) to its end.
  GeneratorOptions generator;
  generator.jobs = 200;
  generator.gpu_memory_bytes = 100 * kGiB;
  generator.mean_arrival_gap_s = 2;
  const Trace trace = GenerateTrace(generator);
  const ClusterResult r = RunCluster(trace, Cluster(2, 2, "whole-gpu"));
  const auto &jobs = r.run.jobs;
  auto held_from = [&](size_t i) {
    return jobs[i].started_s + trace.jobs[i].tasks[0].host_before_s + jobs[i].gpu_wait_s;
  };
  size_t overlaps = 0, checked = 0;
  for (size_t a = 0; a < jobs.size(); ++a) {
    REQUIRE(jobs[a].outcome == JobOutcome::kCompleted);
    REQUIRE_FALSE(jobs[a].gpus.empty());
    for (size_t b = a + 1; b < jobs.size(); ++b) {
      if (jobs[a].gpus.front() != jobs[b].gpus.front()) continue;
      ++checked;
      overlaps += held_from(a) < jobs[b].ended_s - 1e-9 && held_from(b) < jobs[a].ended_s - 1e-9;
    }
  }
  CHECK(checked > 1000);
  CHECK(overlaps == 0);
  CHECK(r.peak_pending > 0);  // loaded: jobs did wait for a GPU
}

TEST_CASE("Slurm refuses a job asking more gpumem than a node has", "[sim][cluster]") {
  Trace trace = EqualJobs(2, 60 * kGiB);
  trace.jobs[1].tasks[0].memory_bytes = 250 * kGiB;
  const ClusterResult r = RunCluster(trace, Cluster(1, 2, "mgb"));
  CHECK(r.run.jobs[0].outcome == JobOutcome::kCompleted);
  CHECK(r.run.jobs[1].outcome == JobOutcome::kRejected);
  CHECK_THAT(r.run.jobs[1].error, Catch::Contains("Slurm"));
  CHECK(r.job_node == std::vector<int>{0, -1});
}

TEST_CASE("the same seed gives the same cluster run, another seed another", "[sim][cluster]") {
  GeneratorOptions generator;
  generator.jobs = 12;
  generator.gpu_memory_bytes = 100 * kGiB;
  const Trace profiles = GenerateTrace(generator);
  auto run = [&](uint64_t seed) {
    ProfileDrawOptions draw;
    draw.jobs = 400;
    draw.seed = seed;
    draw.mean_arrival_gap_s = 0.5;
    auto trace = DrawFromProfiles(profiles, draw);
    REQUIRE(trace.ok());
    const ClusterResult r = RunCluster(*trace, Cluster(2, 2, "mgb"));
    return ReportJson(r.run, "t", "drawn", std::nullopt).dump();
  };
  const std::string first = run(7);
  CHECK(first == run(7));
  CHECK(first != run(8));
}

TEST_CASE("draws from profiles: seeded, Poisson arrivals, every profile used", "[sim][cluster]") {
  GeneratorOptions generator;
  generator.jobs = 5;
  generator.gpu_memory_bytes = 100 * kGiB;
  const Trace profiles = GenerateTrace(generator);
  ProfileDrawOptions draw;
  draw.jobs = 20000;
  draw.seed = 11;
  draw.mean_arrival_gap_s = 0.25;
  auto trace = DrawFromProfiles(profiles, draw);
  REQUIRE(trace.ok());
  REQUIRE(trace->jobs.size() == 20000);
  CHECK(trace->jobs[0].arrival_s == 0.0);
  CHECK(trace->jobs.back().arrival_s / 19999 == Approx(0.25).epsilon(0.03));  // the mean gap
  std::vector<int> used(profiles.jobs.size(), 0);
  for (size_t i = 0; i < trace->jobs.size(); ++i) {
    const std::string &name = trace->jobs[i].name;
    CHECK(name.substr(name.find('#')) == "#" + std::to_string(i));
    for (size_t p = 0; p < profiles.jobs.size(); ++p)
      used[p] += name.rfind(profiles.jobs[p].name + "#", 0) == 0;
  }
  for (int n : used) CHECK(n == Approx(4000).margin(300));  // uniform
  ProfileDrawOptions none = draw;
  none.jobs = 0;
  CHECK_FALSE(DrawFromProfiles(profiles, none).ok());
  CHECK_FALSE(DrawFromProfiles(Trace{}, draw).ok());
}
