#include "simulate_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"

#include "batch_import.h"
#include "cluster_command.h"
#include "json_fields.h"
#include "profile_draw.h"
#include "mgb/core/gpu_config.h"
#include "mgb/core/scheduler.h"
#include "run_report.h"
#include "simulate_flags.h"
#include "simulator.h"
#include "slowdown_model.h"
#include "trace_generator.h"
#include "trace_json.h"

namespace mgb::sim {
namespace {

// Everything but the policy: the node and the models, from the flags.
absl::StatusOr<SimOptions> NodeFromFlags(const SimulateFlags &flags) {
  SimOptions options;
  if (!flags.gpu_config_file.empty()) {
    auto gpus = core::LoadGpuConfig(flags.gpu_config_file);
    if (!gpus.ok()) return gpus.status();
    options.gpus = *gpus;
  } else {
    options.gpus =
        UniformGpus(flags.gpu_count,
                    flags.gpu_memory_bytes ? flags.gpu_memory_bytes : kH200MemoryBytes, flags.sms);
  }
  if (flags.context_bytes) {
    options.core.context_reserve_bytes = *flags.context_bytes;
    options.context_bytes = *flags.context_bytes;
  }
  options.workers = flags.workers;
  options.core.max_slowdown_percent = flags.max_slowdown_percent;
  options.utilisation_buckets = flags.utilisation_buckets;
  if (!flags.model_file.empty()) {
    absl::StatusOr<SlowdownModel> model = ReadModelFile(flags.model_file);
    if (!model.ok()) return model.status();
    options.model = *std::move(model);
  }
  return options;
}

// Sets the core's policy of `options` to the one `name` names.
absl::Status SetPolicy(const std::string &name, SimOptions &options) {
  auto policy = core::ParsePolicy(name);
  if (!policy.ok())
    return absl::InvalidArgumentError("--policy: " + std::string(policy.status().message()));
  options.core.policy = *policy;
  return absl::OkStatus();
}

// --write-model: the model with the error it was fitted to, for --model.
absl::Status WriteModel(const Calibration &fit, const std::string &path) {
  nlohmann::json json = ModelToJson(fit.model);
  json["error"] = {{"mean_abs_relative", fit.error.mean_abs_relative},
                   {"max_abs_relative", fit.error.max_abs_relative},
                   {"tasks", fit.error.tasks}};
  if (absl::Status written = WriteJsonFile(json, path); !written.ok()) return written;
  std::printf("model written to %s (use with --model)\n", path.c_str());
  return absl::OkStatus();
}

absl::StatusOr<int> CalibrateCommand(const SimulateFlags &flags) {
  std::vector<CoRunGroup> groups;
  const absl::StatusOr<SimOptions> node = NodeFromFlags(flags);
  if (!node.ok()) return node.status();
  std::optional<Trace> profiles;
  for (const std::string &file : flags.calibrate_files) {
    const absl::StatusOr<nlohmann::json> json = ParseJsonFile(file);
    if (!json.ok()) return json.status();
    if (json->is_object() && json->contains("groups")) {
      absl::StatusOr<std::vector<CoRunGroup>> measured = ReadCoRunFile(file);
      if (!measured.ok()) return measured.status();
      for (CoRunGroup &g : *measured) groups.push_back(std::move(g));
      continue;
    }
    if (flags.profiles_file.empty()) {
      return absl::InvalidArgumentError(
          file + ": a batch result: --profiles TRACE must give the jobs' solo profiles");
    }
    if (!profiles) {
      absl::StatusOr<Trace> read = ReadTraceFile(flags.profiles_file);
      if (!read.ok()) return read.status();
      profiles = *std::move(read);
    }
    const absl::StatusOr<RecordedRun> run = RecordedRunFromJson(*json, file);
    if (!run.ok()) return run.status();
    absl::StatusOr<CoRunGroup> group =
        CoRunGroupFromBatch(*run, *profiles, node->gpus.front().warp_capacity());
    if (!group.ok()) return group.status();
    groups.push_back(*std::move(group));
  }
  const ModelError before = MeasureError(SlowdownModel{}, groups);
  const Calibration fit = Calibrate(groups);
  std::printf("co-run measurements: %zu tasks in %zu groups\n", fit.error.tasks, groups.size());
  std::printf(
      "default model:    interference %.4f  demand_scale %.3f  error mean %.1f%% max %.1f%%\n",
      SlowdownModel{}.interference, SlowdownModel{}.demand_scale, 100 * before.mean_abs_relative,
      100 * before.max_abs_relative);
  std::printf(
      "calibrated model: interference %.4f  demand_scale %.3f  error mean %.1f%% max %.1f%%\n",
      fit.model.interference, fit.model.demand_scale, 100 * fit.error.mean_abs_relative,
      100 * fit.error.max_abs_relative);
  if (!flags.write_model_file.empty()) {
    if (absl::Status written = WriteModel(fit, flags.write_model_file); !written.ok())
      return written;
  }
  return 0;
}

absl::StatusOr<int> FromBatch(const SimulateFlags &flags) {
  const absl::StatusOr<RecordedRun> run = ReadRecordedRun(flags.from_batch_file);
  if (!run.ok()) return run.status();
  // NVML's per-process memory includes the CUDA context, which the simulator charges apart.
  const absl::StatusOr<Trace> trace =
      ProfilesFromSoloRun(*run, flags.context_bytes.value_or(core::kDefaultContextReserve));
  if (!trace.ok()) return trace.status();
  if (absl::Status written = WriteTraceFile(*trace, flags.write_trace_file); !written.ok())
    return written;
  std::printf("%zu job profiles from the solo runs in %s written to %s\n", trace->jobs.size(),
              flags.from_batch_file.c_str(), flags.write_trace_file.c_str());
  return 0;
}

absl::StatusOr<int> CheckRecorded(const SimulateFlags &flags) {
  absl::StatusOr<SimOptions> options = NodeFromFlags(flags);
  if (!options.ok()) return options.status();
  if (absl::Status set = SetPolicy(flags.policies.front(), *options); !set.ok()) return set;
  const absl::StatusOr<RecordedRun> run = ReadRecordedRun(flags.check_recorded_file);
  if (!run.ok()) return run.status();
  const absl::StatusOr<Trace> profiles = ReadTraceFile(flags.profiles_file);
  if (!profiles.ok()) return profiles.status();
  const absl::StatusOr<RecordedCheck> check = CheckRecordedRun(*run, *profiles, *options);
  if (!check.ok()) return check.status();
  const bool pass = check->relative_error <= flags.tolerance;
  std::printf("recorded run %s (%zu jobs, policy %s, %u workers, %zu GPUs)\n",
              flags.check_recorded_file.c_str(), run->jobs.size(), check->simulation.policy.c_str(),
              check->simulation.workers, options->gpus.size());
  std::printf(
      "measured makespan  %.1f s\nsimulated makespan %.1f s\nerror %.1f%% (tolerance "
      "%.1f%%): %s\n",
      check->measured_makespan_s, check->simulated_makespan_s, 100 * check->relative_error,
      100 * flags.tolerance, pass ? "PASS" : "FAIL");
  if (!flags.out_file.empty()) {
    absl::Status written =
        WriteJsonFile(ReportJson(check->simulation, flags.label, flags.profiles_file, std::nullopt),
                      flags.out_file);
    if (!written.ok()) return written;
  }
  return pass ? 0 : 1;
}

// --fit-recorded: the model whose re-simulations of recorded runs (as --check-recorded) come
// closest to their measured makespans, and every run's error before and after.
absl::StatusOr<int> FitRecorded(const SimulateFlags &flags) {
  absl::StatusOr<SimOptions> options = NodeFromFlags(flags);
  if (!options.ok()) return options.status();
  if (absl::Status set = SetPolicy(flags.policies.front(), *options); !set.ok()) return set;
  const std::vector<std::string> profile_files =
      absl::StrSplit(flags.profiles_file, ',', absl::SkipEmpty());
  struct Recorded {
    std::string file;
    RecordedRun run;
    Trace profiles;
  };
  std::vector<Recorded> runs;
  for (size_t i = 0; i < flags.fit_recorded_files.size(); ++i) {
    absl::StatusOr<RecordedRun> run = ReadRecordedRun(flags.fit_recorded_files[i]);
    if (!run.ok()) return run.status();
    absl::StatusOr<Trace> profiles =
        ReadTraceFile(profile_files[std::min(i, profile_files.size() - 1)]);
    if (!profiles.ok()) return profiles.status();
    runs.push_back({flags.fit_recorded_files[i], *std::move(run), *std::move(profiles)});
  }
  // Each run's error under a model; a run the simulation refuses is an error of the input.
  auto errors = [&](const SlowdownModel &model) -> absl::StatusOr<std::vector<double>> {
    SimOptions with = *options;
    with.model = model;
    std::vector<double> out;
    for (const Recorded &r : runs) {
      absl::StatusOr<RecordedCheck> check = CheckRecordedRun(r.run, r.profiles, with);
      if (!check.ok()) return check.status();
      out.push_back(check->relative_error);
    }
    return out;
  };
  const absl::StatusOr<std::vector<double>> before = errors(options->model);
  if (!before.ok()) return before.status();
  // The worst run decides: the aim is every makespan within the tolerance. Whole runs have host
  // phases, so their co-run cost (host_interference) is fitted too.
  Calibration fit;
  fit.model = FitModel(
      [&](const SlowdownModel &m) {
        const absl::StatusOr<std::vector<double>> each = errors(m);
        return each.ok() ? *std::max_element(each->begin(), each->end())
                         : std::numeric_limits<double>::infinity();
      },
      /*with_host=*/true);
  fit.model.source = "fitted to " + std::to_string(runs.size()) + " recorded runs' makespans";
  const absl::StatusOr<std::vector<double>> after = errors(fit.model);
  if (!after.ok()) return after.status();
  for (double x : *after) {
    fit.error.mean_abs_relative += x / static_cast<double>(after->size());
    fit.error.max_abs_relative = std::max(fit.error.max_abs_relative, x);
  }
  fit.error.tasks = after->size();
  std::printf(
      "fitted model: interference %.3f, demand_scale %.3f, host_interference %.3f (start: %.3f, "
      "%.3f, %.3f)\n",
      fit.model.interference, fit.model.demand_scale, fit.model.host_interference,
      options->model.interference, options->model.demand_scale, options->model.host_interference);
  bool pass = true;
  for (size_t i = 0; i < runs.size(); ++i) {
    std::printf("  %s: error %.1f%% -> %.1f%%\n", runs[i].file.c_str(), 100 * (*before)[i],
                100 * (*after)[i]);
    pass = pass && (*after)[i] <= flags.tolerance;
  }
  std::printf("mean error %.1f%%, max %.1f%% (tolerance %.1f%%): %s\n",
              100 * fit.error.mean_abs_relative, 100 * fit.error.max_abs_relative,
              100 * flags.tolerance, pass ? "PASS" : "FAIL");
  if (!flags.write_model_file.empty()) {
    if (absl::Status written = WriteModel(fit, flags.write_model_file); !written.ok())
      return written;
  }
  return pass ? 0 : 1;
}

// The trace of --trace, --generate or --draw, and how the header and the report name it.
struct TraceInput {
  Trace trace;
  std::string description;
  std::string source;
};

absl::StatusOr<TraceInput> LoadTrace(const SimulateFlags &flags, const SimOptions &options) {
  TraceInput input;
  if (flags.generate) {
    GeneratorOptions generator = flags.generator;
    generator.gpu_memory_bytes = options.gpus.front().memory_bytes;
    input.trace = GenerateTrace(generator);
    input.description = "a synthetic trace";
    input.source = "(generated)";
  } else if (flags.draw_jobs > 0) {
    Trace profiles;
    for (const std::string &file : flags.draw_from) {
      absl::StatusOr<Trace> part = ReadTraceFile(file);
      if (!part.ok()) return part.status();
      profiles.comment += (profiles.comment.empty() ? "" : "; ") + file;
      for (JobProfile &job : part->jobs) profiles.jobs.push_back(std::move(job));
    }
    ProfileDrawOptions draw;
    draw.jobs = flags.draw_jobs;
    draw.seed = flags.generator.seed;
    draw.mean_arrival_gap_s = flags.generator.mean_arrival_gap_s;
    auto drawn = DrawFromProfiles(profiles, draw);
    if (!drawn.ok())
      return absl::InvalidArgumentError("--draw: " + std::string(drawn.status().message()));
    input.trace = std::move(*drawn);
    input.description = "draws from the profiles of " + profiles.comment;
    input.source = "(drawn from " + profiles.comment + ")";
  } else {
    absl::StatusOr<Trace> trace = ReadTraceFile(flags.trace_file);
    if (!trace.ok()) return trace.status();
    input.trace = *std::move(trace);
    input.description = flags.trace_file;
    input.source = flags.trace_file;
  }
  return input;
}

absl::StatusOr<int> SimulateTrace(const SimulateFlags &flags) {
  absl::StatusOr<SimOptions> node = NodeFromFlags(flags);
  if (!node.ok()) return node.status();
  SimOptions &options = *node;
  const absl::StatusOr<TraceInput> input = LoadTrace(flags, options);
  if (!input.ok()) return input.status();
  const Trace &trace = input->trace;
  if (!flags.write_trace_file.empty()) {
    if (absl::Status written = WriteTraceFile(trace, flags.write_trace_file); !written.ok())
      return written;
  }
  if (flags.nodes > 0)
    return SimulateClusterCommand(flags, options, trace, input->description, input->source);

  std::printf(
      "SIMULATED node (no GPU used): %zu GPU(s) %s, %.1f GiB each; %zu jobs from %s; "
      "slowdown model: %s\n",
      options.gpus.size(), options.gpus.front().name.c_str(),
      static_cast<double>(options.gpus.front().memory_bytes) / 0x1p30, trace.jobs.size(),
      input->description.c_str(), options.model.source.c_str());

  std::vector<SimResult> results;
  for (const std::string &name : flags.policies) {
    if (absl::Status set = SetPolicy(name, options); !set.ok()) return set;
    const auto start = std::chrono::steady_clock::now();
    auto result = Simulate(trace, options);
    if (!result.ok()) return result.status();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fflush(stdout);
    std::fprintf(stderr, "simulated %s: %zu jobs, %llu events in %.2f s\n", name.c_str(),
                 result->jobs.size(), static_cast<unsigned long long>(result->events), wall);
    results.push_back(std::move(*result));
  }

  std::vector<const SimResult *> rows;
  std::optional<double> single;
  for (const SimResult &r : results) {
    rows.push_back(&r);
    if (r.policy == "single") single = SummaryOf(r).throughput_jobs_per_hour;
  }
  const std::string &source = input->source;
  for (const SimResult &r : results) {
    std::cout << "\n[" << r.policy << "]\n";
    PrintRunTable(r, flags.label + " " + r.policy, std::cout);
  }
  std::cout << "\n";
  PrintPolicyTable(rows, std::cout);
  if (!flags.out_file.empty()) {
    nlohmann::json json;
    if (results.size() == 1) {
      json = ReportJson(results.front(), flags.label, source, single);
    } else {
      json = {{"runs", nlohmann::json::array()}};
      for (const SimResult &r : results) {
        json["runs"].push_back(ReportJson(r, flags.label, source, single));
      }
    }
    if (absl::Status written = WriteJsonFile(json, flags.out_file); !written.ok()) return written;
    std::printf("report written to %s\n", flags.out_file.c_str());
  }
  return 0;
}

// The mode the flags ask for: its exit status, or the error of bad input.
absl::StatusOr<int> RunMode(const SimulateFlags &flags) {
  if (!flags.calibrate_files.empty()) return CalibrateCommand(flags);
  if (!flags.from_batch_file.empty()) return FromBatch(flags);
  if (!flags.check_recorded_file.empty()) return CheckRecorded(flags);
  if (!flags.fit_recorded_files.empty()) return FitRecorded(flags);
  return SimulateTrace(flags);
}

// Bad usage or input: one line on stderr, exit status 2.
int BadInput(const absl::Status &status) {
  std::fprintf(stderr, "mgb simulate: %s\n", std::string(status.message()).c_str());
  return 2;
}

}  // namespace
}  // namespace mgb::sim

int RunSimulateCommand(int argc, char **argv) {
  using namespace mgb::sim;
  auto flags = ParseSimulateFlags(argc, argv);
  if (!flags.ok()) return BadInput(flags.status());
  if (flags->help) {
    std::fputs(kSimulateUsage, stdout);
    return 0;
  }
  if (!flags->version_line.empty()) {
    std::printf("%s\n", flags->version_line.c_str());
    return 0;
  }
  const absl::StatusOr<int> exit_status = RunMode(*flags);
  return exit_status.ok() ? *exit_status : BadInput(exit_status.status());
}
