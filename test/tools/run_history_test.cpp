#include <catch2/catch.hpp>
#include <cstdlib>

#include <fstream>

#include "run_history.h"
#include "runner.h"
#include "temp_dir.h"

using namespace mgb::batch;

namespace {

Job Named(const std::string &name, std::vector<std::string> argv, double arrival = 0) {
  Job job;
  job.name = name;
  job.argv = std::move(argv);
  job.arrival_s = arrival;
  return job;
}

}  // namespace

TEST_CASE("run history: medians of successful runs, matched by command line", "[batch][history]") {
  const std::string run1 = R"({"jobs": [
    {"argv": ["srad", "100", "20000"], "run_s": 50.0, "exit_code": 0, "ended_s": 50},
    {"argv": ["bfs", "g.txt"], "run_s": 20.0, "exit_code": 0, "ended_s": 21},
    {"argv": ["bfs", "g.txt"], "run_s": 3.0, "exit_code": 1, "crashed": true, "ended_s": 3}]})";
  const std::string run2 = R"({"jobs": [
    {"argv": ["srad", "100", "20000"], "run_s": 54.0, "exit_code": 0, "ended_s": 54},
    {"argv": ["srad", "100", "20000"], "run_s": 70.0, "exit_code": 0, "ended_s": 71}]})";
  absl::StatusOr<RunHistory> h = ParseRunHistory(run1, "run1.json", {});
  REQUIRE(h.ok());
  h = ParseRunHistory(run2, "run2.json", *std::move(h));
  REQUIRE(h.ok());
  std::vector<Job> jobs = {Named("a", {"bfs", "g.txt"}), Named("b", {"srad", "100", "20000"}),
                           Named("c", {"srad", "100", "11000"})};
  std::vector<double> e = ExpectedRunTimes(jobs, *h);
  REQUIRE(e.size() == 3);
  CHECK(e[0] == Approx(20.0));  // the crashed run of the same command line adds nothing
  CHECK(e[1] == Approx(54.0));  // median of 50, 54, 70
  CHECK(e[2] == -1);            // never seen
}

TEST_CASE("run history: a file that is not a batch run names the file and the field",
          "[batch][history]") {
  CHECK(ParseRunHistory("[]", "x.json", {}).status().message() ==
        "x.json: not the JSON of an `mgb batch --out` run (no \"jobs\" array)");
  CHECK(ParseRunHistory(R"({"jobs": [{"argv": ["a"], "exit_code": 0}]})", "y.json", {})
            .status()
            .message() == "y.json: jobs[0].run_s: missing or not a number");
  CHECK(ParseRunHistory(R"({"jobs": [{"argv": [1], "run_s": 1, "exit_code": 0}]})", "z.json", {})
            .status()
            .message() == "z.json: jobs[0].argv: every element must be a string");
  TempDir dir;
  absl::StatusOr<RunHistory> missing = LoadRunHistory({dir.path() + "/none.json"});
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK(missing.status().message() == dir.path() + "/none.json: cannot read");
}

TEST_CASE("longest-first: one worker starts the longest expected job first, unknown ones before it",
          "[batch][runner][history]") {
  TempDir dir;
  auto sleeper = [](const std::string &name, const char *seconds) {
    return Named(name, {"/bin/sh", "-c", std::string("sleep ") + seconds, name});
  };
  std::vector<Job> jobs = {sleeper("short", "0.05"), sleeper("long", "0.05"),
                           sleeper("unknown", "0.05"), sleeper("middle", "0.05")};
  RunnerOptions options;
  options.workers = 1;
  options.log_dir = dir.path();
  options.expected_s = {1.0, 30.0, -1, 10.0};
  BatchResult r = RunBatch(jobs, options);
  REQUIRE(r.records.size() == 4);  // records stay in job list order
  CHECK(r.records[0].job.name == "short");
  CHECK(r.records[2].started_s < r.records[1].started_s);  // unknown, then long
  CHECK(r.records[1].started_s < r.records[3].started_s);  // long, then middle
  CHECK(r.records[3].started_s < r.records[0].started_s);  // middle, then short

  options.expected_s.clear();  // FIFO
  BatchResult fifo = RunBatch(jobs, options);
  for (size_t i = 1; i < fifo.records.size(); ++i)
    CHECK(fifo.records[i - 1].started_s < fifo.records[i].started_s);
}

TEST_CASE("longest-first gives each job MGB_QUEUE_PRIORITY by its expected length; FIFO none",
          "[batch][runner][history]") {
  CHECK(QueuePriorities({1.0, 30.0, -1, 10.0, 30.0}) == std::vector<uint32_t>{1, 3, 5, 2, 3});
  CHECK(QueuePriorities({}).empty());
  TempDir dir;
  // Each job checks the priority it was given (and that one from outside is replaced).
  auto expects = [](const std::string &name, const char *priority) {
    return Named(
        name, {"/bin/sh", "-c", std::string("test \"${MGB_QUEUE_PRIORITY-none}\" = ") + priority});
  };
  setenv("MGB_QUEUE_PRIORITY", "99", 1);
  RunnerOptions options;
  options.workers = 3;
  options.log_dir = dir.path();
  options.expected_s = {2.0, 50.0, -1};
  BatchResult r =
      RunBatch({expects("short", "1"), expects("long", "2"), expects("unknown", "3")}, options);
  for (const JobRecord &job : r.records) CHECK(job.exit_code == 0);
  unsetenv("MGB_QUEUE_PRIORITY");
  options.expected_s.clear();  // FIFO: nothing set
  BatchResult fifo = RunBatch({expects("fifo", "none")}, options);
  CHECK(fifo.records[0].exit_code == 0);
}

TEST_CASE("longest-first never starts a job before its arrival", "[batch][runner][history]") {
  TempDir dir;
  std::vector<Job> jobs = {Named("now", {"/bin/sh", "-c", "sleep 0.05"}),
                           Named("later_long", {"/bin/sh", "-c", "sleep 0.05"}, 0.3)};
  RunnerOptions options;
  options.workers = 2;
  options.log_dir = dir.path();
  options.expected_s = {1.0, 100.0};
  BatchResult r = RunBatch(jobs, options);
  CHECK(r.records[0].started_s < 0.2);
  CHECK(r.records[1].started_s >= 0.3);
}
