#include <catch2/catch.hpp>

#include <cmath>
#include <set>

#include "job_list.h"
#include "mix_generator.h"
#include "temp_dir.h"

using namespace mgb::batch;

namespace {

std::string Message(const absl::Status &status) { return std::string(status.message()); }
std::string ArgAfter(const Job &job, const std::string &flag) {
  for (size_t i = 0; i + 1 < job.argv.size(); ++i)
    if (job.argv[i] == flag) return job.argv[i + 1];
  return "";
}
}  // namespace

TEST_CASE("mixes have the paper's large:small ratios and size classes", "[batch][mix]") {
  for (int count : {16, 32}) {
    for (auto [large, small] : {std::pair{1, 1}, {2, 1}, {3, 1}, {5, 1}}) {
      MixSpec spec;
      spec.jobs = count;
      spec.large = large;
      spec.small = small;
      spec.seed = 7;
      std::vector<Job> jobs = GenerateMix(spec);
      REQUIRE(jobs.size() == size_t(count));
      int large_jobs = 0;
      for (const Job &job : jobs) {
        INFO(job.name);
        double fraction = job.gb / spec.gpu_gib;
        bool is_large = fraction > 0.25;
        large_jobs += is_large;
        CHECK(job.name[0] == (is_large ? 'L' : 'S'));
        if (is_large) {
          CHECK(job.gb <= spec.max_gib);
        } else {
          CHECK(fraction >= 0.06 - 1e-3);
        }
        CHECK(std::stod(ArgAfter(job, "--gb")) == job.gb);
        CHECK(job.memory_bytes == uint64_t(std::ceil(job.gb * 1073741824.0)));
        CHECK(std::stol(ArgAfter(job, "--iters")) >= 1);
        CHECK(job.argv[0] == "build/workloads/" + job.workload);
      }
      CHECK(large_jobs == std::lround(double(count) * large / (large + small)));
    }
  }
}

TEST_CASE("mixes are deterministic per seed and draw from all six workloads", "[batch][mix]") {
  MixSpec spec;
  spec.jobs = 32;
  spec.seed = 42;
  std::string first = JobListToJson(GenerateMix(spec));
  CHECK(JobListToJson(GenerateMix(spec)) == first);
  spec.seed = 43;
  CHECK(JobListToJson(GenerateMix(spec)) != first);
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    spec.seed = seed;
    for (const Job &job : GenerateMix(spec)) seen.insert(job.workload);
  }
  CHECK(seen.size() == WorkloadNames().size());
}

TEST_CASE("iterations follow the calibration so jobs take the target time", "[batch][mix]") {
  TempDir dir;
  std::string path =
      dir.Write("cal.json", R"({"heat2d": {"per_iter_s": 0.001, "per_iter_per_gib_s": 0.0005},
      "mlp_train": {"per_iter_s": 0.004, "per_iter_per_gib_s": 0}})");
  MixSpec spec;
  spec.jobs = 64;
  spec.target_seconds = 20;
  REQUIRE(LoadIterCosts(path, spec.costs).ok());
  int checked = 0;
  for (const Job &job : GenerateMix(spec)) {
    long iters = std::stol(ArgAfter(job, "--iters"));
    if (job.workload == "heat2d") {
      CHECK(iters == std::lround(20 / (0.001 + 0.0005 * job.gb)));
      ++checked;
    } else if (job.workload == "mlp_train") {
      CHECK(iters == 5000);
      ++checked;
    }
  }
  CHECK(checked > 0);
}

TEST_CASE("with a GPU fraction, kernels fill it and snapshots fill the host share",
          "[batch][mix]") {
  TempDir dir;
  std::string path =
      dir.Write("cal.json", R"({"heat2d": {"per_iter_s": 0, "per_iter_per_gib_s": 0.001,
      "input_s": 0.5, "input_s_per_gib": 0.1, "snapshot_s": 0, "snapshot_s_per_gib": 0.05}})");
  MixSpec spec;
  spec.target_seconds = 20;
  spec.gpu_fraction = 0.25;
  REQUIRE(LoadIterCosts(path, spec.costs).ok());
  const IterCost &cost = spec.costs.at("heat2d");
  // 40 GiB: kernels 5 s = 125 iterations; host 15 s - input 4.5 s = 10.5 s = 5.25 -> 5 snapshots.
  Sizing at40 = SizeJob(cost, 40, spec);
  CHECK(at40.iters == 125);
  CHECK(at40.snapshots == 5);
  // 100 GiB: the input phase alone (10.5 s) takes less than the host share: 4.5 s -> 1 snapshot.
  CHECK(SizeJob(cost, 100, spec).snapshots == 1);
  // 160 GiB: the input phase already exceeds it: no snapshots, never negative.
  CHECK(SizeJob(cost, 160, spec).snapshots == 0);
  // Fraction 1: the old sizing (kernels fill the target), no snapshots.
  spec.gpu_fraction = 1;
  CHECK(SizeJob(cost, 40, spec).iters == 500);
  CHECK(SizeJob(cost, 40, spec).snapshots == 0);
  // A calibration without host costs gives no snapshots at any fraction.
  spec.gpu_fraction = 0.25;
  CHECK(SizeJob(IterCost{0, 0.001}, 40, spec).snapshots == 0);

  spec.jobs = 32;
  int with_snapshots = 0;
  for (const Job &job : GenerateMix(spec)) {
    if (job.workload != "heat2d") continue;
    Sizing want = SizeJob(cost, job.gb, spec);
    CHECK(ArgAfter(job, "--iters") == std::to_string(want.iters));
    CHECK(ArgAfter(job, "--snapshots") ==
          (want.snapshots > 0 ? std::to_string(want.snapshots) : ""));
    with_snapshots += want.snapshots > 0;
  }
  CHECK(with_snapshots > 0);
}

TEST_CASE("bad ratios and calibration files are rejected", "[batch][mix]") {
  int l = 0, s = 0;
  CHECK(ParseRatio("3:1", l, s));
  CHECK((l == 3 && s == 1));
  for (const char *bad : {"3", "3:", ":1", "a:b", "3:1x", "-1:2", "0:0", "3/1"}) {
    INFO(bad);
    CHECK_FALSE(ParseRatio(bad, l, s));
  }
  TempDir dir;
  std::map<std::string, IterCost> costs;
  CHECK_THAT(Message(LoadIterCosts(
                 dir.Write("a.json", R"({"heat2d": {"per_iter_s": -1, "per_iter_per_gib_s": 0}})"),
                 costs)),
             Catch::Contains("heat2d.per_iter_s: must be a number >= 0"));
  CHECK_THAT(
      Message(LoadIterCosts(
          dir.Write("b.json", R"({"tetris": {"per_iter_s": 1, "per_iter_per_gib_s": 0}})"), costs)),
      Catch::Contains("tetris: unknown workload"));
  CHECK_THAT(
      Message(LoadIterCosts(dir.Write("c.json", R"({"bfs_graph": {"per_iter_s": 1}})"), costs)),
      Catch::Contains("bfs_graph.per_iter_per_gib_s"));
  CHECK_THAT(
      Message(LoadIterCosts(
          dir.Write(
              "d.json",
              R"({"heat2d": {"per_iter_s": 1, "per_iter_per_gib_s": 0, "snapshot_s_per_gib": "x"}})"),
          costs)),
      Catch::Contains("heat2d.snapshot_s_per_gib: must be a number >= 0"));
  CHECK_THAT(Message(LoadIterCosts(dir.Path("missing.json"), costs)),
             Catch::Contains("cannot open"));
}
