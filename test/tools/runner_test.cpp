#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "report.h"
#include "runner.h"
#include "find_record.h"
#include "temp_dir.h"

using namespace mgb::batch;

namespace {

Job Shell(const std::string &name, const std::string &script, double arrival = 0) {
  Job job;
  job.name = name;
  job.argv = {"/bin/sh", "-c", script};
  job.arrival_s = arrival;
  return job;
}

// Largest number of jobs whose [started, ended) intervals overlap.
int MaxConcurrent(const BatchResult &r) {
  int most = 0;
  for (const JobRecord &a : r.records) {
    int n = 0;
    for (const JobRecord &b : r.records) n += b.started_s <= a.started_s && a.started_s < b.ended_s;
    most = std::max(most, n);
  }
  return most;
}

}  // namespace

TEST_CASE("the runner records exits, OOM deaths and kernel times with 2 workers",
          "[batch][runner]") {
  TempDir dir;
  std::vector<Job> jobs = {
      Shell("ok",
            "sleep 0.3; echo 'MGB_KERNEL_MS name=k ms=1.5 launches=3'; "
            "echo 'MGB_KERNEL_MS name=k ms=2 launches=1'; echo 'MGB_KERNEL_MS name=j ms=0.25 "
            "launches=2'; "
            "echo 'MGB_RESULT PASS workload=x'"),
      Shell("exit3", "sleep 0.2; exit 3"),
      Shell("oom",
            "echo 'CUDA error at heat2d.cu:170: out of memory (cudaMalloc(&g.a, n))' >&2; exit 2"),
      Shell("killed", "sleep 0.1; kill -9 $$"),
      Shell("failed_check", "echo 'MGB_RESULT FAIL bad=3'; exit 1"),
      Shell("oom_word_but_ok", "echo 'checked: no out of memory here'; exit 0"),
  };
  RunnerOptions options;
  options.workers = 2;
  options.log_dir = dir.path();
  std::ostringstream progress;
  options.progress = &progress;
  BatchResult r = RunBatch(jobs, options);

  REQUIRE(r.records.size() == jobs.size());
  CHECK(MaxConcurrent(r) == 2);
  for (const JobRecord &rec : r.records) {
    INFO(rec.job.name);
    CHECK(rec.Finished());
    CHECK(rec.started_s >= rec.queued_s);
    CHECK(rec.ended_s >= rec.started_s);
    CHECK(rec.ended_s <= r.makespan_s);
  }
  const JobRecord &ok = Find(r, "ok");
  CHECK(ok.exit_code == 0);
  CHECK_FALSE(ok.crashed);
  CHECK(ok.result == "PASS");
  REQUIRE(ok.kernels.size() == 2);
  CHECK(ok.kernels[0].name == "k");
  CHECK(ok.kernels[0].ms == Approx(3.5));
  CHECK(ok.kernels[0].launches == 4);
  CHECK(ok.KernelMs() == Approx(3.75));
  CHECK(ok.ended_s - ok.started_s >= 0.3);

  CHECK(Find(r, "exit3").exit_code == 3);
  CHECK(Find(r, "exit3").crashed);
  CHECK_FALSE(Find(r, "exit3").oom);
  CHECK(Find(r, "oom").oom);
  CHECK(Find(r, "oom").crashed);
  CHECK(Find(r, "killed").signal == SIGKILL);
  CHECK(Find(r, "killed").crashed);
  CHECK(Find(r, "failed_check").result == "FAIL");
  CHECK_FALSE(Find(r, "oom_word_but_ok").oom);  // only a crash can be an OOM death

  Summary s = Summarize(r);
  CHECK(s.jobs == 6);
  CHECK(s.succeeded == 2);
  CHECK(s.crashed == 4);
  CHECK(s.oom == 1);
  CHECK(s.check_failed == 1);
  CHECK(s.crash_percent == Approx(100.0 * 4 / 6));
  CHECK(s.throughput_jobs_per_hour == Approx(2 * 3600.0 / r.makespan_s));
  CHECK_THAT(progress.str(), Catch::Contains("start ok") && Catch::Contains("end oom exit=2 OOM"));
}

TEST_CASE("jobs wait for their arrival time and see MGB_SOCKET", "[batch][runner]") {
  TempDir dir;
  std::vector<Job> jobs = {Shell("late", "test \"$MGB_SOCKET\" = /tmp/mgbd-test.sock", 0.4),
                           Shell("early", "test \"$MGB_SOCKET\" = /tmp/mgbd-test.sock")};
  RunnerOptions options;
  options.workers = 2;
  options.log_dir = dir.path();
  options.socket = "/tmp/mgbd-test.sock";
  BatchResult r = RunBatch(jobs, options);
  CHECK(Find(r, "late").started_s >= 0.4);
  CHECK(Find(r, "late").queued_s == 0.4);
  CHECK(Find(r, "early").started_s < 0.4);
  CHECK(Find(r, "late").exit_code == 0);
  CHECK(Find(r, "early").exit_code == 0);
  CHECK(Summarize(r).mean_turnaround_s < 1.0);
}

TEST_CASE("a missing program is a crashed job, not a runner failure", "[batch][runner]") {
  TempDir dir;
  Job job;
  job.name = "missing";
  job.argv = {"/nonexistent/program"};
  RunnerOptions options;
  options.log_dir = dir.path();
  BatchResult r = RunBatch({job}, options);
  CHECK(r.records[0].exit_code == 127);
  CHECK(r.records[0].crashed);
  CHECK_THAT(TempDir::Read(r.records[0].stderr_path),
             Catch::Contains("cannot run '/nonexistent/program': No such file or directory"));
}

TEST_CASE("a program named without a path is found on PATH, as a shell would", "[batch][runner]") {
  TempDir dir;
  Job job;
  job.name = "by-name";
  job.argv = {"sh", "-c", "echo found"};
  RunnerOptions options;
  options.log_dir = dir.path();
  BatchResult r = RunBatch({job}, options);
  CHECK(r.records[0].exit_code == 0);
  CHECK_THAT(TempDir::Read(r.records[0].stdout_path), Catch::Contains("found"));
}

TEST_CASE("a stop request kills running jobs and leaves queued ones unstarted", "[batch][runner]") {
  TempDir dir;
  std::vector<Job> jobs = {Shell("long", "sleep 30"), Shell("queued", "true")};
  RunnerOptions options;
  options.workers = 1;
  options.log_dir = dir.path();
  static volatile std::sig_atomic_t stop = 0;
  stop = 0;
  options.stop = &stop;
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = 1;
  });
  BatchResult r = RunBatch(jobs, options);
  stopper.join();
  CHECK(r.interrupted);
  CHECK(Find(r, "long").signal == SIGTERM);
  CHECK(Find(r, "long").ended_s < 5);
  CHECK(Find(r, "queued").started_s < 0);
  CHECK(Summarize(r).not_run == 1);
}

TEST_CASE("the JSON record carries the summary, every job's fields and GPU samples",
          "[batch][report]") {
  TempDir dir;
  RunnerOptions options;
  options.workers = 2;
  options.log_dir = dir.path();
  // libmgb prints its wait clock only when asked (MGB_REPORT_WAITS): the batch asks for its jobs.
  BatchResult r = RunBatch({Shell("a",
                                  "echo 'MGB_KERNEL_MS name=k ms=4 launches=2'; "
                                  "[ \"$MGB_REPORT_WAITS\" = 1 ] || exit 3; "
                                  "echo 'MGB_WAIT_MS begin=1.5 grow=250.0 begins=1 grows=1' >&2; "
                                  "echo 'MGB_WAIT_MS begin=0.5 grow=0.0 begins=1 grows=0' >&2"),
                            Shell("b", "echo 'out of memory' >&2; exit 1")},
                           options);
  RunInfo info{"cg:2", "jobs.json", "/tmp/s.sock", 2, "longest-first", "", "", {}};
  std::vector<GpuSample> samples = {{0.5, {{80, 40, 1000, 2000}, {10, 5, 100, 2000}}}};
  auto doc = nlohmann::json::parse(BatchResultToJson(r, info, samples));
  CHECK(doc["label"] == "cg:2");
  CHECK(doc["workers"] == 2);
  CHECK(doc["order"] == "longest-first");
  for (const char *key :
       {"jobs", "succeeded", "crashed", "oom", "not_run", "crash_percent", "makespan_s",
        "throughput_jobs_per_hour", "mean_turnaround_s", "mean_wait_s"})
    CHECK(doc["summary"].contains(key));
  CHECK(doc["summary"]["crashed"] == 1);
  CHECK(doc["summary"]["oom"] == 1);
  REQUIRE(doc["jobs"].size() == 2);
  for (const char *key : {"name", "argv", "memory_bytes", "queued_s", "started_s", "ended_s",
                          "run_s", "turnaround_s", "exit_code", "signal", "crashed", "oom",
                          "result", "kernel_ms", "kernels", "stdout", "stderr"})
    CHECK(doc["jobs"][0].contains(key));
  CHECK(doc["jobs"][0]["kernel_ms"] == 4.0);
  CHECK(doc["jobs"][0]["kernels"][0]["launches"] == 2);
  CHECK(doc["jobs"][1]["oom"] == true);
  // libmgb's waits, summed over the job's processes; absent for a job that printed none.
  CHECK(doc["jobs"][0]["mgb_wait_ms"]["begin"] == 2.0);
  CHECK(doc["jobs"][0]["mgb_wait_ms"]["grow"] == 250.0);
  CHECK_FALSE(doc["jobs"][1].contains("mgb_wait_ms"));
  CHECK(doc["gpu_samples"][0]["gpus"][1]["util"] == 10);
  CHECK(doc["gpu_samples"][0]["gpus"][0]["mem_used"] == 1000);
  // Per-job memory fields appear only where memory was sampled (job_memory_test.cpp).
  CHECK_FALSE(doc["jobs"][0].contains("memory_samples"));
  CHECK_FALSE(doc.contains("per_process_memory"));
}

TEST_CASE("slots given on each turn replace the worker count, and fewer stop no job",
          "[batch][runner][auto]") {
  TempDir dir;
  std::vector<Job> jobs;
  for (int i = 0; i < 6; ++i) jobs.push_back(Shell("j" + std::to_string(i), "sleep 0.3"));
  RunnerOptions options;
  options.workers = 6;  // ignored: slots decide
  options.log_dir = dir.path();
  // One slot for the first 0.5 s (jobs one at a time), then 3.
  options.slots = [](double now_s) { return now_s < 0.5 ? 1 : 3; };
  BatchResult r = RunBatch(jobs, options);
  for (const JobRecord &rec : r.records) CHECK(rec.exit_code == 0);
  CHECK(MaxConcurrent(r) == 3);
  CHECK(Find(r, "j1").started_s >= 0.3);  // j0 ran alone
  // Shrinking from 3 to 1 while 3 run: none is stopped, no new one starts until 1 is left.
  std::vector<Job> more;
  for (int i = 0; i < 4; ++i) more.push_back(Shell("k" + std::to_string(i), "sleep 0.4"));
  options.slots = [](double now_s) { return now_s < 0.1 ? 3 : 1; };
  BatchResult s = RunBatch(more, options);
  for (const JobRecord &rec : s.records) CHECK(rec.exit_code == 0);
  CHECK(Find(s, "k3").started_s >= Find(s, "k0").ended_s);
}
