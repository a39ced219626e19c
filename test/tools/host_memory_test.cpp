#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "host_memory.h"
#include "run_history.h"
#include "runner.h"
#include "find_record.h"
#include "temp_dir.h"

using namespace mgb::batch;

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

// A /proc/meminfo as the gate reads it, with MemAvailable in kB.
std::string Meminfo(uint64_t available) {
  return "MemTotal:       263000000 kB\nMemFree:         1000 kB\nMemAvailable:   " +
         std::to_string(available / 1024) + " kB\n";
}

Job Command(const std::string &name, std::vector<std::string> argv, uint64_t host_estimate = 0) {
  Job job;
  job.name = name;
  job.argv = std::move(argv);
  job.host_memory_bytes = host_estimate;
  return job;
}

}  // namespace

TEST_CASE("host memory rule: what running jobs still expect to take counts against a start",
          "[batch][host]") {
  // 100 available; a running job expected at 60 holds 20 now: 40 more to come, 60 left.
  HostMemoryVerdict v = DecideHostMemory(100, 10, 50, {{60, 20}});
  CHECK(v.pending == 40);
  CHECK(v.needed == 60);
  CHECK(v.admit);  // 100 - 40 >= 50 + 10, exactly
  CHECK_FALSE(DecideHostMemory(100, 11, 50, {{60, 20}}).admit);
  // A job past its expectation adds nothing more; an unknown one (0) neither.
  CHECK(DecideHostMemory(100, 10, 50, {{60, 90}, {0, 30}}).pending == 0);
  // Nothing running: even a job larger than the node starts (alone), so no job waits for ever.
  CHECK(DecideHostMemory(10, 10, 500, {}).admit);
  // Pending beyond what is available refuses without wrapping around.
  CHECK_FALSE(DecideHostMemory(30, 0, 0, {{100, 0}}).admit);
}

TEST_CASE("host memory: meminfo fields in bytes, resident sets from statm", "[batch][host]") {
  TempDir dir;
  std::string meminfo = dir.Write("meminfo", Meminfo(3 * kGiB));
  CHECK(ReadMeminfoField(meminfo, "MemAvailable") == 3 * kGiB);
  CHECK(ReadMeminfoField(meminfo, "MemTotal") == uint64_t{263000000} * 1024);
  CHECK_FALSE(ReadMeminfoField(meminfo, "SwapTotal").has_value());
  CHECK_FALSE(ReadMeminfoField(dir.Path("none"), "MemAvailable").has_value());
  CHECK(ResidentBytes(getpid()) > 0);
  CHECK(ResidentBytes(getpid(), dir.Path("no-proc")) == 0);
  // A job's process group: its wrapper and the wrapper's children, not other groups.
  const std::string proc = dir.Path("proc");
  auto process = [&](int pid, int pgrp, int pages) {
    std::filesystem::create_directories(proc + "/" + std::to_string(pid));
    dir.Write("proc/" + std::to_string(pid) + "/stat",
              std::to_string(pid) + " (mgb run (x)) S 1 " + std::to_string(pgrp) + " 0\n");
    dir.Write("proc/" + std::to_string(pid) + "/statm", "999 " + std::to_string(pages) + " 0\n");
  };
  process(100, 100, 10);
  process(101, 100, 5);
  process(200, 200, 7);
  process(300, 300, 1);
  std::filesystem::create_directories(proc + "/self");
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  std::map<pid_t, uint64_t> groups = GroupResidentBytes({100, 200, 400}, proc);
  CHECK(groups[100] == 15 * page);
  CHECK(groups[200] == 7 * page);
  CHECK_FALSE(groups.count(300));
  CHECK(groups[400] == 0);
  CHECK(DefaultHostReserve(0) == kGiB);
  CHECK(DefaultHostReserve(252 * kGiB) == 252 * kGiB / 20);
}

TEST_CASE("the gate holds a job whose estimate does not fit beside a running one",
          "[batch][runner][host]") {
  TempDir dir;
  // 3 GiB available; each job is expected to take 2 GiB but holds almost nothing yet.
  HostMemoryGate gate(512 * kMiB, dir.Write("meminfo", Meminfo(3 * kGiB)));
  std::vector<Job> jobs = {Command("a", {"/bin/sh", "-c", "sleep 0.4"}, 2 * kGiB),
                           Command("b", {"/bin/sh", "-c", "sleep 0.1"}, 2 * kGiB)};
  RunnerOptions options;
  options.workers = 2;
  options.log_dir = dir.Path("");
  options.host_gate = &gate;
  BatchResult held = RunBatch(jobs, options);
  CHECK(Find(held, "b").started_s >= Find(held, "a").ended_s);
  CHECK(Find(held, "b").host_wait_s > 0.2);
  CHECK(Find(held, "a").host_wait_s == 0);

  // With room for both, they run side by side.
  HostMemoryGate roomy(512 * kMiB, dir.Write("meminfo-roomy", Meminfo(8 * kGiB)));
  options.host_gate = &roomy;
  BatchResult side = RunBatch(jobs, options);
  CHECK(Find(side, "b").started_s < Find(side, "a").ended_s);
  CHECK(Find(side, "b").host_wait_s == 0);
}

TEST_CASE("a finished job's measured host peak holds back the next run of its command line",
          "[batch][runner][host]") {
  TempDir dir;
  // 150 MiB available, 100 MiB reserve: a job known to take 200 MiB does not fit beside another.
  HostMemoryGate gate(100 * kMiB, dir.Write("meminfo", Meminfo(150 * kMiB)));
  const std::vector<std::string> takes_200m = {"python3", "-c",
                                               "b = b'x' * (200 * 2**20); print(len(b))"};
  std::vector<Job> jobs = {Command("first", takes_200m),
                           Command("other", {"/bin/sh", "-c", "sleep 1.2"}),
                           Command("again", takes_200m)};
  RunnerOptions options;
  options.workers = 2;
  options.log_dir = dir.Path("");
  options.host_gate = &gate;
  BatchResult r = RunBatch(jobs, options);
  const JobRecord &first = Find(r, "first"), &other = Find(r, "other"), &again = Find(r, "again");
  REQUIRE(first.exit_code == 0);
  CHECK(first.host_peak_bytes >= 200 * kMiB);  // wait4's ru_maxrss, in bytes
  CHECK(other.host_peak_bytes > 0);
  // Unknown at first, so "first" and "other" started together; "again" waited for "other".
  CHECK(other.started_s < first.ended_s);
  CHECK(again.started_s >= other.ended_s);
  CHECK(again.host_wait_s > 0.5);
}

TEST_CASE("run history: host peaks by command line, the largest of any finished run",
          "[batch][history][host]") {
  absl::StatusOr<RunHistory> h = ParseRunHistory(
      R"({"jobs": [
        {"argv": ["lavaMD", "-boxes1d", "150"], "run_s": 40, "exit_code": 0, "ended_s": 41,
         "host_peak_bytes": 1000},
        {"argv": ["lavaMD", "-boxes1d", "150"], "run_s": 2, "exit_code": -1, "signal": 9,
         "crashed": true, "ended_s": 3, "host_peak_bytes": 3000},
        {"argv": ["needle", "40960", "10"], "run_s": 9, "exit_code": 0, "ended_s": 9}]})",
      "run.json", {});
  REQUIRE(h.ok());
  CHECK(h->host_peak_bytes.at("lavaMD -boxes1d 150") == 3000);
  CHECK_FALSE(h->host_peak_bytes.count("needle 40960 10"));
  absl::StatusOr<RunHistory> bad = ParseRunHistory(
      R"({"jobs": [{"argv": ["x"], "run_s": 1, "exit_code": 0, "host_peak_bytes": "lots"}]})",
      "bad.json", {});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("bad.json: jobs[0].host_peak_bytes: must be a non-negative integer"));
}
