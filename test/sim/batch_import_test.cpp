// Solo runs of `mgb batch` into profiles, and the recorded-run check on synthetic recorded runs
// whose makespans are known by hand.
#include <catch2/catch.hpp>

#include "batch_import.h"
#include "sim_test_util.h"

using namespace mgb::sim;
using namespace mgb::sim::test;

namespace {

// A `mgb batch` result as tools/batch/report.cpp writes it (only the fields that matter here).
nlohmann::json BatchJob(const std::string &name, double queued, double started, double ended,
                        double kernel_ms, bool crashed = false) {
  return {{"name", name},           {"argv", {name}},       {"memory_bytes", 10 * kGiB},
          {"queued_s", queued},     {"started_s", started}, {"ended_s", ended},
          {"kernel_ms", kernel_ms}, {"crashed", crashed},   {"oom", false}};
}

nlohmann::json BatchRun(int workers, std::vector<nlohmann::json> jobs, double makespan) {
  return {{"label", "recorded"},
          {"workers", workers},
          {"jobs", jobs},
          {"summary", {{"makespan_s", makespan}}}};
}

// Four 12 s jobs run alone, two at a time on 2 GPUs (single-assignment, 2 workers).
nlohmann::json SoloRun() {
  return BatchRun(2,
                  {BatchJob("a", 0, 0, 12, 9000), BatchJob("b", 0, 0, 12, 6000),
                   BatchJob("c", 0, 12, 24, 12000), BatchJob("d", 0, 12, 24, 3000)},
                  24);
}

SimOptions TwoGpus(const char *policy) {
  SimOptions options = Node(2, 80 * kGiB, policy, 0);
  return options;
}

// What must succeed here.
RecordedRun Read(const nlohmann::json &json, const std::string &source) {
  absl::StatusOr<RecordedRun> run = RecordedRunFromJson(json, source);
  REQUIRE(run.ok());
  return *std::move(run);
}
Trace Profiles(const RecordedRun &run, uint64_t context_bytes = mgb::core::kDefaultContextReserve) {
  absl::StatusOr<Trace> trace = ProfilesFromSoloRun(run, context_bytes);
  REQUIRE(trace.ok());
  return *std::move(trace);
}
RecordedCheck Check(const RecordedRun &run, const Trace &profiles, const char *policy) {
  absl::StatusOr<RecordedCheck> check = CheckRecordedRun(run, profiles, TwoGpus(policy));
  REQUIRE(check.ok());
  return *std::move(check);
}

// The message of what must fail as bad input.
template <class T>
std::string ErrorOf(const absl::StatusOr<T> &result) {
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(result.status().message());
}

}  // namespace

TEST_CASE("solo runs become one-task profiles with their busy fraction", "[sim][batch]") {
  const Trace trace = Profiles(Read(SoloRun(), "solo.json"));
  REQUIRE(trace.jobs.size() == 4);
  CHECK(trace.jobs[0].tasks[0].solo_s == Approx(12));
  CHECK(trace.jobs[0].tasks[0].busy_fraction == Approx(0.75));
  CHECK(trace.jobs[3].tasks[0].busy_fraction == Approx(0.25));
  CHECK(trace.jobs[2].tasks[0].memory_bytes == 10 * kGiB);
}

TEST_CASE("solo runs that cannot be profiles are refused by name", "[sim][batch]") {
  nlohmann::json crashed = BatchRun(1, {BatchJob("x", 0, 0, 5, 0, true)}, 5);
  CHECK_THAT(ErrorOf(ProfilesFromSoloRun(Read(crashed, "r.json"))),
             Catch::Contains("r.json: jobs[0] (\"x\").crashed"));
  nlohmann::json no_memory = BatchRun(1, {BatchJob("y", 0, 0, 5, 0)}, 5);
  no_memory["jobs"][0]["memory_bytes"] = 0;
  CHECK_THAT(ErrorOf(ProfilesFromSoloRun(Read(no_memory, "r.json"))),
             Catch::Contains("jobs[0] (\"y\").memory_bytes"));
  nlohmann::json bad = BatchRun(1, {BatchJob("z", 0, 0, 5, 0)}, 5);
  bad["jobs"][0].erase("ended_s");
  CHECK_THAT(ErrorOf(RecordedRunFromJson(bad, "r.json")),
             Catch::Contains("r.json: jobs[0].ended_s: missing"));
}

TEST_CASE("re-simulating the solo run itself lands on its makespan", "[sim][batch]") {
  const RecordedRun run = Read(SoloRun(), "solo.json");
  const RecordedCheck check = Check(run, Profiles(run), "single");
  CHECK(check.simulated_makespan_s == Approx(24.0));
  CHECK(check.relative_error < 1e-9);
}

TEST_CASE("a recorded run within 10% passes, one further away fails", "[sim][batch]") {
  const Trace profiles = Profiles(Read(SoloRun(), "solo.json"));
  // A recorded single-assignment run of the same jobs with 2 workers: the simulator says 24 s.
  auto recorded = [](double makespan) {
    return Read(BatchRun(2,
                         {BatchJob("a", 0, 0, 12.5, 0), BatchJob("b", 0, 0, 12.5, 0),
                          BatchJob("c", 0, 12.5, makespan, 0), BatchJob("d", 0, 12.5, makespan, 0)},
                         makespan),
                "run.json");
  };
  const RecordedCheck near = Check(recorded(25.5), profiles, "single");
  CHECK(near.simulated_makespan_s == Approx(24.0));
  CHECK(near.relative_error == Approx(1.5 / 25.5));
  CHECK(near.relative_error <= 0.10);
  const RecordedCheck far = Check(recorded(30.0), profiles, "single");
  CHECK(far.relative_error == Approx(0.2));
}

TEST_CASE("a recorded job with no profile is named", "[sim][batch]") {
  const Trace profiles = Profiles(Read(SoloRun(), "solo.json"));
  const RecordedRun run = Read(BatchRun(1, {BatchJob("zz", 0, 0, 3, 0)}, 3), "run.json");
  CHECK_THAT(ErrorOf(CheckRecordedRun(run, profiles, TwoGpus("mgb"))),
             Catch::Contains("run.json: jobs[0].name: \"zz\" has no profile"));
}

TEST_CASE("observed per-job memory becomes the task's peak and memory steps", "[sim][batch]") {
  constexpr uint64_t kContext = 500 * mgb::core::kMiB;
  // Ran 10 s from t = 2: context only, then 4 GiB, then 6 GiB (NVML counts the context too).
  nlohmann::json run =
      BatchRun(1, {BatchJob("grows", 0, 2, 12, 5000), BatchJob("estimate_only", 0, 12, 22, 0)}, 22);
  run["jobs"][0]["memory_bytes"] = 0;  // no estimate needed when memory was observed
  run["jobs"][0]["memory_samples"] = {{2.5, 0},
                                      {3.0, kContext},
                                      {4.5, kContext + 4 * kGiB},
                                      {5.0, kContext + 4 * kGiB},
                                      {9.5, kContext + 6 * kGiB},
                                      {11.5, kContext + 6 * kGiB}};
  run["jobs"][0]["peak_memory_bytes"] = kContext + 6 * kGiB;
  const Trace trace = Profiles(Read(run, "solo.json"), kContext);
  const TaskProfile &grows = trace.jobs[0].tasks[0];
  CHECK(grows.memory_bytes == 6 * kGiB);
  REQUIRE(grows.memory.size() == 3);  // equal neighbours merged; context-only reads as 0
  CHECK(grows.memory[0].at == 0.0);
  CHECK(grows.memory[0].bytes == 0);
  CHECK(grows.memory[1].at == Approx(0.25));
  CHECK(grows.memory[1].bytes == 4 * kGiB);
  CHECK(grows.memory[2].at == Approx(0.75));
  CHECK(grows.memory[2].bytes == 6 * kGiB);
  CHECK(grows.MemoryAt(0.5) == 4 * kGiB);
  // No samples: the job list's estimate throughout, as before.
  const TaskProfile &estimate = trace.jobs[1].tasks[0];
  CHECK(estimate.memory_bytes == 10 * kGiB);
  CHECK(estimate.memory.empty());

  // Only a context observed and no estimate: refused by name.
  run["jobs"][0]["memory_samples"] = {{3.0, kContext}};
  run["jobs"][0]["peak_memory_bytes"] = kContext;
  CHECK_THAT(ErrorOf(ProfilesFromSoloRun(Read(run, "solo.json"), kContext)),
             Catch::Contains("jobs[0] (\"grows\").memory_bytes"));
}

TEST_CASE("bad memory samples are refused naming the field", "[sim][batch]") {
  nlohmann::json run = BatchRun(1, {BatchJob("x", 0, 0, 5, 0)}, 5);
  run["jobs"][0]["memory_samples"] = {{1.0, 5}, {0.5}};
  CHECK_THAT(ErrorOf(RecordedRunFromJson(run, "r.json")),
             Catch::Contains("r.json: jobs[0].memory_samples[1]: must be [t_s, bytes]"));
  run["jobs"][0]["memory_samples"] = {{1.0, 5}, nlohmann::json::array()};
  CHECK_THAT(ErrorOf(RecordedRunFromJson(run, "r.json")),
             Catch::EndsWith("r.json: jobs[0].memory_samples[1]: must be [t_s, bytes]"));
  run["jobs"][0]["memory_samples"] = {{1.0, 5}, {0.5, 7}};
  CHECK_THAT(ErrorOf(RecordedRunFromJson(run, "r.json")),
             Catch::Contains("memory_samples[1]: samples must be in time order"));
  run["jobs"][0]["memory_samples"] = {{1.0, -5}};
  CHECK_THAT(ErrorOf(RecordedRunFromJson(run, "r.json")), Catch::Contains("memory_samples[0][1]"));
}
