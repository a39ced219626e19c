// Trace files: what is read, and errors that name the file, the field and (for syntax) the line.
#include <catch2/catch.hpp>

#include "temp_file.h"
#include "trace_json.h"

using namespace mgb::sim;
using mgb::sim::test::TempFile;

namespace {

// The error message of reading `text` as a trace file, or "" if it was read.
std::string ErrorOf(const std::string &text) {
  TempFile file("trace.json", text);
  const absl::StatusOr<Trace> trace = ReadTraceFile(file.path());
  if (trace.ok()) return "";
  CHECK(trace.status().code() == absl::StatusCode::kInvalidArgument);
  const std::string message(trace.status().message());
  CHECK(message.rfind(file.path(), 0) == 0);  // starts with the file's name
  return message;
}

const char kGoodJob[] = R"({"name": "a", "arrival_s": 2, "host_after_s": 1,
  "tasks": [{"host_before_s": 0.5, "solo_s": 10, "busy_fraction": 0.8, "memory_bytes": 1000,
             "memory": [{"at": 0, "bytes": 500}, {"at": 0.25, "bytes": 1000}],
             "grid": [64, 2], "block": [128]}]})";

std::string WithJob(const std::string &job) {
  return std::string(R"({"mgb_trace": 1, "jobs": [)") + job + "]}";
}

}  // namespace

TEST_CASE("a trace file is read with every field", "[sim][trace]") {
  TempFile file("good.json", WithJob(kGoodJob));
  const absl::StatusOr<Trace> trace = ReadTraceFile(file.path());
  REQUIRE(trace.ok());
  REQUIRE(trace->jobs.size() == 1);
  const JobProfile &job = trace->jobs[0];
  CHECK(job.name == "a");
  CHECK(job.arrival_s == 2);
  CHECK(job.SoloSeconds() == Approx(11.5));
  const TaskProfile &task = job.tasks[0];
  CHECK(task.busy_fraction == 0.8);
  CHECK(task.shape.grid.x == 64);
  CHECK(task.shape.grid.y == 2);
  CHECK(task.shape.block.x == 128);
  CHECK(task.MemoryAt(0.1) == 500);
  CHECK(task.MemoryAt(0.5) == 1000);
  CHECK(task.PeakMemory() == 1000);
}

TEST_CASE("a trace written and read back is the same trace", "[sim][trace]") {
  TempFile in("in.json", WithJob(kGoodJob)), out("out.json");
  const absl::StatusOr<Trace> trace = ReadTraceFile(in.path());
  REQUIRE(trace.ok());
  REQUIRE(WriteTraceFile(*trace, out.path()).ok());
  const absl::StatusOr<Trace> again = ReadTraceFile(out.path());
  REQUIRE(again.ok());
  CHECK(TraceToJson(*again) == TraceToJson(*trace));
}

TEST_CASE("bad traces are refused with the file and the field named", "[sim][trace]") {
  CHECK_THAT(ErrorOf("{\"mgb_trace\": 1,\n \"jobs\": [}"),
             Catch::Contains(":2:") && Catch::Contains("not valid JSON"));
  CHECK_THAT(ErrorOf("{\"mgb_trace\": 1, \"jobs\": [{\"solo_s\": 1e400}]}"),
             Catch::Contains("not valid JSON") && Catch::Contains("1e400"));
  CHECK_THAT(ErrorOf(R"({"jobs": []})"), Catch::Contains("mgb_trace: missing"));
  CHECK_THAT(ErrorOf(R"({"mgb_trace": 2, "jobs": []})"),
             Catch::Contains("unsupported format version 2"));
  CHECK_THAT(ErrorOf(R"({"mgb_trace": 1, "jobs": []})"),
             Catch::Contains("jobs: the trace has no jobs"));
  CHECK_THAT(ErrorOf(WithJob(R"({"tasks": [{"solo_s": 0, "memory_bytes": 1}]})")),
             Catch::Contains("jobs[0].tasks[0].solo_s: must be > 0"));
  CHECK_THAT(
      ErrorOf(WithJob(R"({"tasks": [{"solo_s": 1, "memory_bytes": 1, "busy_fraction": 1.5}]})")),
      Catch::Contains("jobs[0].tasks[0].busy_fraction: must be in"));
  CHECK_THAT(ErrorOf(WithJob(R"({"tasks": [{"solo_s": 1}]})")),
             Catch::Contains("jobs[0].tasks[0].memory_bytes: missing"));
  CHECK_THAT(ErrorOf(WithJob(R"({"tasks": [{"solo_s": 1, "memory_bytes": -5}]})")),
             Catch::Contains("memory_bytes: must not be negative"));
  CHECK_THAT(ErrorOf(WithJob(R"({"tasks": [{"solo": 1, "memory_bytes": 5}]})")),
             Catch::Contains("jobs[0].tasks[0]: unknown field \"solo\""));
  CHECK_THAT(ErrorOf(WithJob(R"({"tasks": []})")), Catch::Contains("jobs[0].tasks: a job needs"));
  CHECK_THAT(
      ErrorOf(WithJob(R"({"arrival_s": "soon", "tasks": [{"solo_s": 1, "memory_bytes": 5}]})")),
      Catch::Contains("jobs[0].arrival_s: must be a number"));
  CHECK_THAT(ErrorOf(WithJob(R"({"tasks": [{"solo_s": 1, "memory_bytes": 5, "grid": [0]}]})")),
             Catch::Contains("jobs[0].tasks[0].grid[0]: must be a positive"));
  CHECK_THAT(
      ErrorOf(WithJob(R"({"tasks": [{"solo_s": 1, "memory_bytes": 5, "grid": [1, 2, 3, 4, 5]}]})")),
      Catch::Contains("jobs[0].tasks[0].grid: must be an array of 1 to 3"));
  CHECK_THAT(ErrorOf(WithJob(R"({"tasks": [{"solo_s": 1, "memory": [{"at": 0.5, "bytes": 1},
                                                                    {"at": 0.2, "bytes": 2}]}]})")),
             Catch::Contains("jobs[0].tasks[0].memory[1].at: steps must be in ascending order"));
}

TEST_CASE("a missing trace file is named", "[sim][trace]") {
  const absl::StatusOr<Trace> trace = ReadTraceFile("/nonexistent/trace.json");
  CHECK(trace.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(trace.status().message()),
             Catch::Contains("/nonexistent/trace.json: cannot open"));
}

TEST_CASE("the first bad field is the error, whatever follows it", "[sim][trace]") {
  // The version is read first; the empty job list after it is not reported.
  CHECK_THAT(ErrorOf(R"({"mgb_trace": 2, "jobs": []})"),
             Catch::EndsWith("mgb_trace: unsupported format version 2 (this mgb reads version 1)"));
  // The second job's bad field, not the third's, and nothing about the missing ones after it.
  CHECK_THAT(ErrorOf(R"({"mgb_trace": 1, "jobs": [{"tasks": [{"solo_s": 1, "memory_bytes": 5}]},
                          {"arrival_s": -1, "tasks": "none"}, {"tasks": []}]})"),
             Catch::EndsWith("jobs[1].arrival_s: must be >= 0, got -1"));
  // A task that is no object: one error, on the task.
  CHECK_THAT(ErrorOf(WithJob(R"({"tasks": [7]})")),
             Catch::EndsWith("jobs[0].tasks[0]: must be an object"));
}
