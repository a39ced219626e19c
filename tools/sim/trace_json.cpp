#include "trace_json.h"

#include <fstream>

#include "json_fields.h"

namespace mgb::sim {
namespace {

core::Dim3 ReadDim3(const Field &field) {
  const size_t n = field.ArraySize();
  if (n < 1 || n > 3) {
    field.Fail("must be an array of 1 to 3 positive integers");
    return core::Dim3{};
  }
  uint32_t v[3] = {1, 1, 1};
  for (size_t i = 0; i < n; ++i) {
    const uint64_t x = field[i].Unsigned();
    if (x == 0 || x > UINT32_MAX) field[i].Fail("must be a positive 32-bit integer");
    v[i] = static_cast<uint32_t>(x);
  }
  return core::Dim3{v[0], v[1], v[2]};
}

std::vector<MemoryStep> ReadMemorySteps(const Field &field) {
  std::vector<MemoryStep> steps;
  for (size_t i = 0; i < field.ArraySize(); ++i) {
    const Field step = field[i];
    step.OnlyKeys({"at", "bytes"});
    MemoryStep s{step["at"].NumberIn(0.0, 1.0), step["bytes"].Unsigned()};
    if (!steps.empty() && s.at < steps.back().at)
      step["at"].Fail("steps must be in ascending order");
    steps.push_back(s);
  }
  return steps;
}

TaskProfile ReadTask(const Field &field) {
  field.OnlyKeys({"host_before_s", "solo_s", "busy_fraction", "memory_bytes", "memory", "grid",
                  "block", "registers_per_thread", "shared_bytes_per_block"});
  TaskProfile task;
  task.host_before_s = field.Has("host_before_s") ? field["host_before_s"].NumberAtLeast(0) : 0;
  task.solo_s = field["solo_s"].Number();
  if (task.solo_s <= 0) field["solo_s"].Fail("must be > 0");
  task.busy_fraction = field.Has("busy_fraction") ? field["busy_fraction"].NumberIn(0, 1) : 1.0;
  if (field.Has("memory")) task.memory = ReadMemorySteps(field["memory"]);
  if (field.Has("memory_bytes")) {
    task.memory_bytes = field["memory_bytes"].Unsigned();
  } else if (!task.memory.empty()) {
    task.memory_bytes = task.PeakMemory();  // a probe that knows the task asks for its peak
  } else {
    field["memory_bytes"].Fail("missing (give memory_bytes or memory steps)");
  }
  if (task.memory_bytes == 0) field["memory_bytes"].Fail("must be > 0");
  task.shape = DefaultLaunchShape();
  if (field.Has("grid")) task.shape.grid = ReadDim3(field["grid"]);
  if (field.Has("block")) task.shape.block = ReadDim3(field["block"]);
  task.shape.registers_per_thread =
      static_cast<uint32_t>(field.Unsigned("registers_per_thread", 0));
  task.shape.shared_bytes_per_block =
      static_cast<uint32_t>(field.Unsigned("shared_bytes_per_block", 0));
  return task;
}

JobProfile ReadJob(const Field &field, size_t index) {
  field.OnlyKeys({"name", "arrival_s", "tasks", "host_after_s"});
  JobProfile job;
  job.name = field.String("name", "job" + std::to_string(index));
  job.arrival_s = field.Has("arrival_s") ? field["arrival_s"].NumberAtLeast(0) : 0;
  job.host_after_s = field.Has("host_after_s") ? field["host_after_s"].NumberAtLeast(0) : 0;
  const Field tasks = field["tasks"];
  if (tasks.ArraySize() == 0) tasks.Fail("a job needs at least one GPU task");
  for (size_t i = 0; i < tasks.ArraySize(); ++i) job.tasks.push_back(ReadTask(tasks[i]));
  return job;
}

nlohmann::json Dim3Json(const core::Dim3 &d) { return nlohmann::json::array({d.x, d.y, d.z}); }

}  // namespace

core::LaunchShape DefaultLaunchShape() {
  core::LaunchShape shape;
  shape.grid = core::Dim3{1056, 1, 1};
  shape.block = core::Dim3{256, 1, 1};
  return shape;
}

absl::StatusOr<Trace> TraceFromJson(const nlohmann::json &json, const std::string &file) {
  const Field root(json, file);
  root.OnlyKeys({"mgb_trace", "jobs", "comment"});
  const uint64_t version = root["mgb_trace"].Unsigned();
  if (version != kTraceFormatVersion) {
    root["mgb_trace"].Fail("unsupported format version " + std::to_string(version) +
                           " (this mgb reads version " + std::to_string(kTraceFormatVersion) + ")");
  }
  Trace trace;
  trace.comment = root.String("comment", "");
  const Field jobs = root["jobs"];
  trace.jobs.reserve(jobs.ArraySize());
  for (size_t i = 0; i < jobs.ArraySize(); ++i) trace.jobs.push_back(ReadJob(jobs[i], i));
  if (trace.jobs.empty()) jobs.Fail("the trace has no jobs");
  if (!root.ok()) return root.status();
  return trace;
}

absl::StatusOr<Trace> ReadTraceFile(const std::string &path) {
  absl::StatusOr<nlohmann::json> json = ParseJsonFile(path);
  if (!json.ok()) return json.status();
  return TraceFromJson(*json, path);
}

nlohmann::json TraceToJson(const Trace &trace) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const JobProfile &job : trace.jobs) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const TaskProfile &task : job.tasks) {
      nlohmann::json t = {
          {"host_before_s", task.host_before_s}, {"solo_s", task.solo_s},
          {"busy_fraction", task.busy_fraction}, {"memory_bytes", task.memory_bytes},
          {"grid", Dim3Json(task.shape.grid)},   {"block", Dim3Json(task.shape.block)}};
      if (!task.memory.empty()) {
        nlohmann::json steps = nlohmann::json::array();
        for (const MemoryStep &s : task.memory) steps.push_back({{"at", s.at}, {"bytes", s.bytes}});
        t["memory"] = steps;
      }
      if (task.shape.registers_per_thread)
        t["registers_per_thread"] = task.shape.registers_per_thread;
      if (task.shape.shared_bytes_per_block) {
        t["shared_bytes_per_block"] = task.shape.shared_bytes_per_block;
      }
      tasks.push_back(std::move(t));
    }
    jobs.push_back({{"name", job.name},
                    {"arrival_s", job.arrival_s},
                    {"tasks", std::move(tasks)},
                    {"host_after_s", job.host_after_s}});
  }
  nlohmann::json json = {{"mgb_trace", kTraceFormatVersion}, {"jobs", std::move(jobs)}};
  if (!trace.comment.empty()) json["comment"] = trace.comment;
  return json;
}

absl::Status WriteTraceFile(const Trace &trace, const std::string &path) {
  std::ofstream out(path);
  if (!out) return absl::UnavailableError(path + ": cannot open for writing");
  // One job per line: diffable, and readable at 100,000 jobs.
  const nlohmann::json json = TraceToJson(trace);
  out << "{\"mgb_trace\": " << kTraceFormatVersion;
  if (json.contains("comment")) out << ",\n \"comment\": " << json["comment"].dump();
  out << ",\n \"jobs\": [\n";
  for (size_t i = 0; i < json["jobs"].size(); ++i) {
    out << "  " << json["jobs"][i].dump() << (i + 1 < json["jobs"].size() ? ",\n" : "\n");
  }
  out << " ]\n}\n";
  if (!out) return absl::UnavailableError(path + ": write failed");
  return absl::OkStatus();
}

}  // namespace mgb::sim
