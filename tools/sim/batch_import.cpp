#include "batch_import.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "json_fields.h"
#include "trace_json.h"

namespace mgb::sim {

absl::StatusOr<RecordedRun> RecordedRunFromJson(const nlohmann::json &json,
                                                const std::string &source) {
  const Field root(json, source);
  RecordedRun run;
  run.source = source;
  run.label = root.String("label", "");
  run.workers = static_cast<int>(root.Unsigned("workers", 0));
  const Field jobs = root["jobs"];
  for (size_t i = 0; i < jobs.ArraySize(); ++i) {
    const Field j = jobs[i];
    RecordedJob job;
    job.name = j["name"].String();
    job.memory_bytes = j.Unsigned("memory_bytes", 0);
    job.queued_s = j["queued_s"].NumberAtLeast(0);
    job.started_s = j["started_s"].Number();
    job.ended_s = j["ended_s"].Number();
    job.kernel_ms = j.Has("kernel_ms") ? j["kernel_ms"].NumberAtLeast(0) : 0.0;
    job.crashed =
        j.Has("crashed") && j["crashed"].value().is_boolean() && j["crashed"].value().get<bool>();
    if (job.ended_s >= 0 && job.ended_s < job.started_s) j["ended_s"].Fail("is before started_s");
    if (j.Has("memory_samples")) {
      const Field samples = j["memory_samples"];
      for (size_t k = 0; k < samples.ArraySize(); ++k) {
        const Field sample = samples[k];
        if (sample.ArraySize() != 2) sample.Fail("must be [t_s, bytes]");
        const double t_s = sample[size_t{0}].NumberAtLeast(0);
        if (!job.memory_samples.empty() && t_s < job.memory_samples.back().first) {
          sample.Fail("samples must be in time order");
        }
        job.memory_samples.emplace_back(t_s, sample[1].Unsigned());
        job.peak_memory_bytes = std::max(job.peak_memory_bytes, job.memory_samples.back().second);
      }
    }
    job.peak_memory_bytes = j.Unsigned("peak_memory_bytes", job.peak_memory_bytes);
    run.makespan_s = std::max(run.makespan_s, job.ended_s);
    run.jobs.push_back(std::move(job));
  }
  if (run.jobs.empty()) jobs.Fail("the run has no jobs");
  if (root.Has("summary") && root["summary"].Has("makespan_s")) {
    run.makespan_s = root["summary"]["makespan_s"].NumberAtLeast(0);
  }
  if (!root.ok()) return root.status();
  if (run.makespan_s <= 0)
    return absl::InvalidArgumentError(source +
                                      ": summary.makespan_s: no makespan (no job finished)");
  return run;
}

absl::StatusOr<RecordedRun> ReadRecordedRun(const std::string &path) {
  absl::StatusOr<nlohmann::json> json = ParseJsonFile(path);
  if (!json.ok()) return json.status();
  return RecordedRunFromJson(*json, path);
}

namespace {

// The observed memory as steps over the task's progress, less one CUDA context, equal neighbours
// merged; empty when nothing beyond the context was observed.
std::vector<MemoryStep> ObservedMemorySteps(const RecordedJob &r, uint64_t context_bytes) {
  std::vector<MemoryStep> steps;
  if (r.peak_memory_bytes <= context_bytes) return steps;
  const double run_s = r.ended_s - r.started_s;
  for (const auto &[t_s, bytes] : r.memory_samples) {
    const MemoryStep step{std::clamp((t_s - r.started_s) / run_s, 0.0, 1.0),
                          bytes > context_bytes ? bytes - context_bytes : 0};
    if (steps.empty() || steps.back().bytes != step.bytes) steps.push_back(step);
  }
  if (!steps.empty()) steps.front().at = 0.0;  // the first sample's usage holds from the start
  return steps;
}

}  // namespace

absl::StatusOr<Trace> ProfilesFromSoloRun(const RecordedRun &run, uint64_t context_bytes) {
  Trace trace;
  trace.comment = "solo runs of " + run.source + " (mgb simulate --from-batch)";
  std::unordered_map<std::string, size_t> seen;
  for (size_t i = 0; i < run.jobs.size(); ++i) {
    const RecordedJob &r = run.jobs[i];
    const std::string where = run.source + ": jobs[" + std::to_string(i) + "] (\"" + r.name + "\")";
    if (!seen.emplace(r.name, i).second)
      return absl::InvalidArgumentError(where + ".name: duplicate job name");
    if (r.started_s < 0 || r.ended_s < 0)
      return absl::InvalidArgumentError(where + ": never finished, no solo time");
    if (r.crashed)
      return absl::InvalidArgumentError(where + ".crashed: a crashed run is no solo profile");
    const double run_s = r.ended_s - r.started_s;
    if (run_s <= 0) return absl::InvalidArgumentError(where + ".ended_s: the job ran for no time");
    std::vector<MemoryStep> observed = ObservedMemorySteps(r, context_bytes);
    if (observed.empty() && r.memory_bytes == 0) {
      return absl::InvalidArgumentError(
          where +
          ".memory_bytes: 0 (unknown) and no memory_samples beyond a CUDA context; the simulator "
          "needs each job's memory: give memory_bytes in the job list");
    }
    JobProfile job;
    job.name = r.name;
    TaskProfile task;
    task.solo_s = run_s;
    task.busy_fraction = std::clamp(r.kernel_ms / 1000.0 / run_s, 0.0, 1.0);
    if (observed.empty()) {
      task.memory_bytes = r.memory_bytes;
    } else {
      task.memory_bytes = r.peak_memory_bytes - context_bytes;
      if (observed.size() > 1) task.memory = std::move(observed);  // one step = the peak throughout
    }
    task.shape = DefaultLaunchShape();
    job.tasks.push_back(std::move(task));
    trace.jobs.push_back(std::move(job));
  }
  return trace;
}

namespace {

absl::StatusOr<const JobProfile *> ProfileOf(
    const RecordedRun &run, size_t i,
    const std::unordered_map<std::string, const JobProfile *> &by_name) {
  auto it = by_name.find(run.jobs[i].name);
  if (it == by_name.end()) {
    return absl::InvalidArgumentError(run.source + ": jobs[" + std::to_string(i) + "].name: \"" +
                                      run.jobs[i].name +
                                      "\" has no profile in the --profiles trace");
  }
  return it->second;
}

std::unordered_map<std::string, const JobProfile *> ByName(const Trace &profiles) {
  std::unordered_map<std::string, const JobProfile *> by_name;
  for (const JobProfile &p : profiles.jobs) by_name.emplace(p.name, &p);
  return by_name;
}

}  // namespace

absl::StatusOr<CoRunGroup> CoRunGroupFromBatch(const RecordedRun &run, const Trace &profiles,
                                               uint64_t warp_capacity) {
  const auto by_name = ByName(profiles);
  CoRunGroup group{warp_capacity, {}};
  for (size_t i = 0; i < run.jobs.size(); ++i) {
    const RecordedJob &r = run.jobs[i];
    absl::StatusOr<const JobProfile *> p = ProfileOf(run, i, by_name);
    if (!p.ok()) return p.status();
    const std::string where = run.source + ": jobs[" + std::to_string(i) + "]";
    if (r.crashed || r.ended_s < 0)
      return absl::InvalidArgumentError(where + ": crashed or unfinished, no co-run time");
    if ((*p)->tasks.size() != 1)
      return absl::InvalidArgumentError(where + ": co-run calibration needs one-task profiles");
    const TaskProfile &task = (*p)->tasks[0];
    group.tasks.push_back(
        {task.busy_fraction, task.shape.warps(), (*p)->SoloSeconds(), r.ended_s - r.started_s});
  }
  return group;
}

absl::StatusOr<RecordedCheck> CheckRecordedRun(const RecordedRun &run, const Trace &profiles,
                                               SimOptions options) {
  const auto by_name = ByName(profiles);
  Trace replay;
  for (size_t i = 0; i < run.jobs.size(); ++i) {
    absl::StatusOr<const JobProfile *> profile = ProfileOf(run, i, by_name);
    if (!profile.ok()) return profile.status();
    JobProfile job = **profile;
    job.arrival_s = run.jobs[i].queued_s;
    replay.jobs.push_back(std::move(job));
  }
  if (options.workers == 0) options.workers = static_cast<uint32_t>(std::max(0, run.workers));
  auto simulated = Simulate(replay, options);
  if (!simulated.ok()) return simulated.status();
  RecordedCheck check;
  check.measured_makespan_s = run.makespan_s;
  for (const JobRecord &job : simulated->jobs) {
    check.simulated_makespan_s = std::max(check.simulated_makespan_s, job.ended_s);
  }
  check.relative_error =
      std::abs(check.simulated_makespan_s - check.measured_makespan_s) / check.measured_makespan_s;
  check.simulation = std::move(*simulated);
  return check;
}

}  // namespace mgb::sim
