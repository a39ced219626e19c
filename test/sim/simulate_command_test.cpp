// `mgb simulate` as a user runs it: --help, bad flags and bad files (exit 2), a report in the
// batch format, the converter and the recorded-run check's exit status.
#include <catch2/catch.hpp>

#include <vector>

#include "json_fields.h"
#include "simulate_command.h"
#include "simulate_flags.h"
#include "temp_file.h"

using mgb::sim::test::TempFile;

namespace {

int Run(std::vector<std::string> args) {
  args.insert(args.begin(), "simulate");
  std::vector<char *> argv;
  for (std::string &a : args) argv.push_back(a.data());
  return RunSimulateCommand(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

TEST_CASE("help and bad usage", "[sim][cli]") {
  CHECK(Run({"--help"}) == 0);
  CHECK(Run({}) == 2);
  CHECK(Run({"--frobnicate"}) == 2);
  CHECK(Run({"--generate", "--jobs"}) == 2);
  CHECK(Run({"--generate", "--jobs", "-3"}) == 2);
  CHECK(Run({"--generate", "--mix", "3to1"}) == 2);
  CHECK(Run({"--generate", "--policy", "fastest"}) == 2);
  CHECK(Run({"--generate", "--gpu-memory", "12Q"}) == 2);
  CHECK(Run({"--trace", "/nonexistent.json"}) == 2);
  CHECK(Run({"--generate", "--trace", "x.json"}) == 2);
  CHECK(Run({"--check-recorded", "run.json"}) == 2);  // needs --profiles
}

TEST_CASE("flags: sizes and errors name the flag", "[sim][cli]") {
  CHECK(*mgb::sim::ParseBytes("80G") == 80ull << 30);
  CHECK(*mgb::sim::ParseBytes("141GiB") == 141ull << 30);
  CHECK(*mgb::sim::ParseBytes("512M") == 512ull << 20);
  CHECK(*mgb::sim::ParseBytes("1000") == 1000);
  CHECK_FALSE(mgb::sim::ParseBytes("G").ok());
  std::string a0 = "simulate", a1 = "--workers", a2 = "many";
  char *argv[] = {a0.data(), a1.data(), a2.data()};
  auto flags = mgb::sim::ParseSimulateFlags(3, argv);
  REQUIRE_FALSE(flags.ok());
  CHECK_THAT(std::string(flags.status().message()), Catch::Contains("--workers"));
  // The syntax and error format of every mgb command (cli::FlagParser).
  std::string b1 = "--frobnicate";
  char *bad[] = {a0.data(), b1.data()};
  auto unknown = mgb::sim::ParseSimulateFlags(2, bad);
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(
      std::string(unknown.status().message()),
      Catch::Contains("unknown flag --frobnicate") && Catch::Contains("see mgb simulate --help"));
  std::string g1 = "--generate", g2 = "--jobs=7";
  char *inline_value[] = {a0.data(), g1.data(), g2.data()};
  auto seven = mgb::sim::ParseSimulateFlags(3, inline_value);
  REQUIRE(seven.ok());
  CHECK(seven->generator.jobs == 7);
  std::string v1 = "--version";
  char *version[] = {a0.data(), v1.data()};
  auto printed = mgb::sim::ParseSimulateFlags(2, version);
  REQUIRE(printed.ok());
  CHECK_THAT(printed->version_line, Catch::StartsWith("mgb simulate "));
}

TEST_CASE("a simulated run writes the batch report and the trace it used", "[sim][cli]") {
  TempFile out("report.json"), trace("trace.json");
  REQUIRE(Run({"--generate", "--jobs", "8", "--mix", "1:1", "--seed", "5", "--gpus", "2",
               "--policy", "mgb,single", "--workers", "4", "--out", out.path(), "--write-trace",
               trace.path()}) == 0);
  const nlohmann::json report = nlohmann::json::parse(out.Read());
  REQUIRE(report["runs"].size() == 2);
  for (const auto &run : report["runs"]) {
    CHECK(run["simulated"] == true);
    CHECK(run["summary"]["jobs"] == 8);
    for (const char *key : {"makespan_s", "throughput_jobs_per_hour", "mean_turnaround_s",
                            "crashed", "oom", "succeeded"}) {
      CHECK(run["summary"].contains(key));
    }
    CHECK(run["jobs"].size() == 8);
    CHECK(run["gpu_samples"].size() > 0);
  }
  CHECK(report["runs"][1]["summary"]["throughput_vs_single"] == Approx(1.0));
  // The written trace simulates again to the same report.
  TempFile again("again.json");
  REQUIRE(Run({"--trace", trace.path(), "--gpus", "2", "--policy", "mgb,single", "--workers", "4",
               "--out", again.path()}) == 0);
  nlohmann::json a = nlohmann::json::parse(again.Read()), b = report;
  for (auto *r : {&a, &b}) {
    for (auto &run : (*r)["runs"]) run.erase("jobs_file");
  }
  CHECK(a == b);
}

TEST_CASE("from-batch then check-recorded: exit 0 within tolerance, 1 beyond", "[sim][cli]") {
  const std::string solo_json = R"({"workers": 1, "summary": {"makespan_s": 20},
    "jobs": [{"name": "p", "memory_bytes": 1000000000, "queued_s": 0, "started_s": 0,
              "ended_s": 10, "kernel_ms": 5000, "crashed": false},
             {"name": "q", "memory_bytes": 1000000000, "queued_s": 0, "started_s": 10,
              "ended_s": 20, "kernel_ms": 5000, "crashed": false}]})";
  TempFile solo("solo.json", solo_json), profiles("profiles.json");
  REQUIRE(Run({"--from-batch", solo.path(), "--write-trace", profiles.path()}) == 0);
  CHECK(Run({"--check-recorded", solo.path(), "--profiles", profiles.path(), "--gpus", "1",
             "--policy", "single"}) == 0);
  // Claimed 30 s where one GPU running the two 10 s jobs back to back takes 20 s: 33% off.
  std::string slow = solo_json;
  slow.replace(slow.find("\"makespan_s\": 20"), 16, "\"makespan_s\": 30");
  TempFile slow_run("slow.json", slow);
  CHECK(Run({"--check-recorded", slow_run.path(), "--profiles", profiles.path(), "--gpus", "1",
             "--policy", "single"}) == 1);
}

TEST_CASE("calibrate from a recorded co-run writes a model that --model reads", "[sim][cli]") {
  const std::string solo_json = R"({"workers": 1, "summary": {"makespan_s": 20},
    "jobs": [{"name": "p", "memory_bytes": 1000000000, "queued_s": 0, "started_s": 0,
              "ended_s": 10, "kernel_ms": 8000, "crashed": false},
             {"name": "q", "memory_bytes": 1000000000, "queued_s": 0, "started_s": 10,
              "ended_s": 20, "kernel_ms": 8000, "crashed": false}]})";
  // Both together on one GPU took 18 s each; the default model says 10 x (0.2 + 0.8 x 1.6 x 1.02)
  // = 15.1 s, so calibration must move the parameters to match.
  const std::string corun_json = R"({"workers": 2, "summary": {"makespan_s": 18},
    "jobs": [{"name": "p", "memory_bytes": 1000000000, "queued_s": 0, "started_s": 0,
              "ended_s": 18, "kernel_ms": 8000, "crashed": false},
             {"name": "q", "memory_bytes": 1000000000, "queued_s": 0, "started_s": 0,
              "ended_s": 18, "kernel_ms": 8000, "crashed": false}]})";
  TempFile solo("solo2.json", solo_json), corun("corun.json", corun_json), profiles("p2.json"),
      model("model.json"), trace("t2.json");
  REQUIRE(Run({"--from-batch", solo.path(), "--write-trace", profiles.path()}) == 0);
  CHECK(Run({"--calibrate", corun.path()}) == 2);  // a batch result needs --profiles
  REQUIRE(Run({"--calibrate", corun.path(), "--profiles", profiles.path(), "--write-model",
               model.path()}) == 0);
  const nlohmann::json fitted = nlohmann::json::parse(model.Read());
  CHECK(fitted["error"]["mean_abs_relative"].get<double>() < 0.01);
  REQUIRE(Run({"--generate", "--jobs", "4", "--model", model.path()}) == 0);
  TempFile bad_model("bad-model.json", R"({"interference": -1, "demand_scale": 1})");
  CHECK(Run({"--generate", "--jobs", "4", "--model", bad_model.path()}) == 2);
}

TEST_CASE("fit-recorded fits the model to recorded makespans and says what it cannot fit",
          "[sim][cli]") {
  const std::string solo_json = R"({"workers": 1, "summary": {"makespan_s": 20},
    "jobs": [{"name": "p", "memory_bytes": 1000000000, "queued_s": 0, "started_s": 0,
              "ended_s": 10, "kernel_ms": 8000, "crashed": false},
             {"name": "q", "memory_bytes": 1000000000, "queued_s": 0, "started_s": 10,
              "ended_s": 20, "kernel_ms": 8000, "crashed": false}]})";
  // Both together on one GPU (mgb, 2 workers) in 18 s: the default model says 15.1 s (17% off).
  auto corun = [](int makespan) {
    const std::string m = std::to_string(makespan);
    return R"({"workers": 2, "summary": {"makespan_s": )" + m + R"(},
    "jobs": [{"name": "p", "memory_bytes": 1000000000, "queued_s": 0, "started_s": 0,
              "ended_s": )" +
           m + R"(, "kernel_ms": 8000, "crashed": false},
             {"name": "q", "memory_bytes": 1000000000, "queued_s": 0, "started_s": 0,
              "ended_s": )" +
           m + R"(, "kernel_ms": 8000, "crashed": false}]})";
  };
  TempFile solo("solo3.json", solo_json), run("run18.json", corun(18)), profiles("p3.json"),
      model("fit.json"), faster("run5.json", corun(5));
  REQUIRE(Run({"--from-batch", solo.path(), "--write-trace", profiles.path()}) == 0);
  const std::vector<std::string> node = {"--gpus", "1", "--policy", "mgb"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), node.begin(), node.end());
    return args;
  };
  CHECK(Run(with({"--check-recorded", run.path(), "--profiles", profiles.path()})) == 1);
  REQUIRE(Run(with({"--fit-recorded", run.path(), "--profiles", profiles.path(), "--write-model",
                    model.path()})) == 0);
  CHECK(nlohmann::json::parse(model.Read())["error"]["max_abs_relative"].get<double>() < 0.01);
  CHECK(Run(with({"--check-recorded", run.path(), "--profiles", profiles.path(), "--model",
                  model.path()})) == 0);
  // Two runs that no slowdown explains together (5 s: faster than either job alone): exit 1.
  CHECK(Run(with({"--fit-recorded", run.path() + "," + faster.path(), "--profiles",
                  profiles.path()})) == 1);
  // One trace per run or one for all.
  CHECK(Run(with({"--fit-recorded", run.path(), "--profiles",
                  profiles.path() + "," + profiles.path()})) == 2);
}

TEST_CASE("a slowdown bound (--max-slowdown) bounds the mgb runs' co-run demand in the simulation",
          "[sim][cli]") {
  // The generated jobs' tasks each fill a GPU: with a 5% bound no two share one, so kernels run
  // as fast as under single-assignment while host phases still overlap; without, they share.
  TempFile bounded("bounded.json"), unbounded("unbounded.json");
  const std::vector<std::string> common = {
      "--generate", "--jobs", "8", "--mix", "1:1", "--seed", "5", "--gpus", "2", "--workers", "8"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = common;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  REQUIRE(Run(with({"--policy", "mgb,single", "--max-slowdown", "5", "--out", bounded.path()})) ==
          0);
  REQUIRE(Run(with({"--policy", "mgb", "--out", unbounded.path()})) == 0);
  const nlohmann::json b = nlohmann::json::parse(bounded.Read());
  const nlohmann::json u = nlohmann::json::parse(unbounded.Read());
  auto kernel_ms = [](const nlohmann::json &run) {
    double sum = 0;
    for (const auto &job : run["jobs"]) sum += job["kernel_ms"].get<double>();
    return sum;
  };
  auto makespan = [](const nlohmann::json &run) {
    return run["summary"]["makespan_s"].get<double>();
  };
  const nlohmann::json &mgb = b["runs"][0], &single = b["runs"][1];
  CHECK(kernel_ms(mgb) < 1.02 * kernel_ms(single));
  CHECK(kernel_ms(u) > 1.2 * kernel_ms(single));
  CHECK(makespan(mgb) < makespan(single));
  CHECK(makespan(u) < makespan(mgb));
  CHECK(Run({"--generate", "--max-slowdown", "some"}) == 2);
}
