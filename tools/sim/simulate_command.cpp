#include "simulate_command.h"

#include <chrono>
#include <cstdio>
#include <iostream>

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
SimOptions NodeFromFlags(const SimulateFlags &flags) {
  SimOptions options;
  if (!flags.gpu_config_file.empty()) {
    auto gpus = core::LoadGpuConfig(flags.gpu_config_file);
    if (!gpus.ok()) throw InputError(std::string(gpus.status().message()));
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
  options.utilisation_buckets = flags.utilisation_buckets;
  if (!flags.model_file.empty()) options.model = ReadModelFile(flags.model_file);
  return options;
}

core::Policy PolicyFromFlag(const std::string &name) {
  auto policy = core::ParsePolicy(name);
  if (!policy.ok()) throw InputError("--policy: " + std::string(policy.status().message()));
  return *policy;
}

int CalibrateCommand(const SimulateFlags &flags) {
  std::vector<CoRunGroup> groups;
  const SimOptions node = NodeFromFlags(flags);
  std::optional<Trace> profiles;
  for (const std::string &file : flags.calibrate_files) {
    const nlohmann::json json = ParseJsonFile(file);
    if (json.is_object() && json.contains("groups")) {
      for (CoRunGroup &g : ReadCoRunFile(file)) groups.push_back(std::move(g));
      continue;
    }
    if (flags.profiles_file.empty()) {
      throw InputError(file +
                       ": a batch result: --profiles TRACE must give the jobs' solo profiles");
    }
    if (!profiles) profiles = ReadTraceFile(flags.profiles_file);
    groups.push_back(CoRunGroupFromBatch(RecordedRunFromJson(json, file), *profiles,
                                         node.gpus.front().warp_capacity()));
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
    nlohmann::json json = ModelToJson(fit.model);
    json["error"] = {{"mean_abs_relative", fit.error.mean_abs_relative},
                     {"max_abs_relative", fit.error.max_abs_relative},
                     {"tasks", fit.error.tasks}};
    WriteJsonFile(json, flags.write_model_file);
    std::printf("model written to %s (use with --model)\n", flags.write_model_file.c_str());
  }
  return 0;
}

int FromBatch(const SimulateFlags &flags) {
  const RecordedRun run = ReadRecordedRun(flags.from_batch_file);
  // NVML's per-process memory includes the CUDA context, which the simulator charges apart.
  const Trace trace =
      ProfilesFromSoloRun(run, flags.context_bytes.value_or(core::kDefaultContextReserve));
  WriteTraceFile(trace, flags.write_trace_file);
  std::printf("%zu job profiles from the solo runs in %s written to %s\n", trace.jobs.size(),
              flags.from_batch_file.c_str(), flags.write_trace_file.c_str());
  return 0;
}

int CheckRecorded(const SimulateFlags &flags) {
  SimOptions options = NodeFromFlags(flags);
  options.core.policy = PolicyFromFlag(flags.policies.front());
  const RecordedRun run = ReadRecordedRun(flags.check_recorded_file);
  const Trace profiles = ReadTraceFile(flags.profiles_file);
  const RecordedCheck check = CheckRecordedRun(run, profiles, options);
  const bool pass = check.relative_error <= flags.tolerance;
  std::printf("recorded run %s (%zu jobs, policy %s, %u workers, %zu GPUs)\n",
              flags.check_recorded_file.c_str(), run.jobs.size(), check.simulation.policy.c_str(),
              check.simulation.workers, options.gpus.size());
  std::printf(
      "measured makespan  %.1f s\nsimulated makespan %.1f s\nerror %.1f%% (tolerance "
      "%.1f%%): %s\n",
      check.measured_makespan_s, check.simulated_makespan_s, 100 * check.relative_error,
      100 * flags.tolerance, pass ? "PASS" : "FAIL");
  if (!flags.out_file.empty()) {
    WriteJsonFile(ReportJson(check.simulation, flags.label, flags.profiles_file, std::nullopt),
                  flags.out_file);
  }
  return pass ? 0 : 1;
}

// The trace of --trace, --generate or --draw, and how the header and the report name it.
struct TraceInput {
  Trace trace;
  std::string description;
  std::string source;
};

TraceInput LoadTrace(const SimulateFlags &flags, const SimOptions &options) {
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
      Trace part = ReadTraceFile(file);
      profiles.comment += (profiles.comment.empty() ? "" : "; ") + file;
      for (JobProfile &job : part.jobs) profiles.jobs.push_back(std::move(job));
    }
    ProfileDrawOptions draw;
    draw.jobs = flags.draw_jobs;
    draw.seed = flags.generator.seed;
    draw.mean_arrival_gap_s = flags.generator.mean_arrival_gap_s;
    auto drawn = DrawFromProfiles(profiles, draw);
    if (!drawn.ok()) throw InputError("--draw: " + std::string(drawn.status().message()));
    input.trace = std::move(*drawn);
    input.description = "draws from the profiles of " + profiles.comment;
    input.source = "(drawn from " + profiles.comment + ")";
  } else {
    input.trace = ReadTraceFile(flags.trace_file);
    input.description = flags.trace_file;
    input.source = flags.trace_file;
  }
  return input;
}

int SimulateTrace(const SimulateFlags &flags) {
  SimOptions options = NodeFromFlags(flags);
  const TraceInput input = LoadTrace(flags, options);
  const Trace &trace = input.trace;
  if (!flags.write_trace_file.empty()) WriteTraceFile(trace, flags.write_trace_file);
  if (flags.nodes > 0)
    return SimulateClusterCommand(flags, options, trace, input.description, input.source);

  std::printf(
      "SIMULATED node (no GPU used): %zu GPU(s) %s, %.1f GiB each; %zu jobs from %s; "
      "slowdown model: %s\n",
      options.gpus.size(), options.gpus.front().name.c_str(),
      static_cast<double>(options.gpus.front().memory_bytes) / 0x1p30, trace.jobs.size(),
      input.description.c_str(), options.model.source.c_str());

  std::vector<SimResult> results;
  for (const std::string &name : flags.policies) {
    options.core.policy = PolicyFromFlag(name);
    const auto start = std::chrono::steady_clock::now();
    auto result = Simulate(trace, options);
    if (!result.ok()) throw InputError(std::string(result.status().message()));
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
  const std::string &source = input.source;
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
    WriteJsonFile(json, flags.out_file);
    std::printf("report written to %s\n", flags.out_file.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace mgb::sim

int RunSimulateCommand(int argc, char **argv) {
  using namespace mgb::sim;
  auto flags = ParseSimulateFlags(argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "mgb simulate: %s\n", std::string(flags.status().message()).c_str());
    return 2;
  }
  if (flags->help) {
    std::fputs(kSimulateUsage, stdout);
    return 0;
  }
  if (!flags->version_line.empty()) {
    std::printf("%s\n", flags->version_line.c_str());
    return 0;
  }
  try {
    if (!flags->calibrate_files.empty()) return CalibrateCommand(*flags);
    if (!flags->from_batch_file.empty()) return FromBatch(*flags);
    if (!flags->check_recorded_file.empty()) return CheckRecorded(*flags);
    return SimulateTrace(*flags);
  } catch (const InputError &e) {
    std::fprintf(stderr, "mgb simulate: %s\n", e.what());
    return 2;
  }
}
