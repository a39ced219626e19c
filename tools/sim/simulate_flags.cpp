#include "simulate_flags.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "flags.h"
#include "cluster_policy.h"
#include "mgb/core/byte_size.h"

namespace mgb::sim {

const char kSimulateUsage[] = R"(Usage: mgb simulate [--trace FILE | --generate ...] [options]

Simulates a node of GPUs running mgbd's real scheduling core over a job trace: no GPU and no mgbd
needed. Jobs take a worker slot, run host phases and GPU tasks; the core places every task;
co-running tasks slow each other by the slowdown model; memory is physical: a job whose
allocation would pass a GPU's capacity dies of out-of-memory (as under memory-blind cg:N).

Input (one of):
  --trace FILE             a job trace (JSON; docs/simulator.md "Trace format")
  --draw N                 N jobs drawn at random (with replacement) from measured profiles:
    --from FILES           comma-separated traces of profiles, e.g.
                           examples/traces/w1-h200-solo-profiles.json
                           (--seed and --arrival-gap as for --generate)
  --generate               a synthetic trace (stand-in profiles, not measurements):
    --jobs N               number of jobs (default 16)
    --mix L:S              large:small jobs, e.g. 1:1, 2:1, 3:1, 5:1 (default 1:1)
    --seed N               (default 1); the same seed gives the same trace
    --arrival-gap SECONDS  mean gap of Poisson arrivals (default 0: all queued at the start)
Node:
  --gpus N                 N identical GPUs (default 2) of
    --gpu-memory SIZE      memory per GPU (default 143771MiB, an H200), e.g. 80G, 141GiB
    --sms N                SMs per GPU (default 132)
  --gpu-config FILE        the GPUs from an mgbd --gpus JSON file instead
  --context-reserve SIZE   CUDA context per process per GPU, charged by the core and really
                           held on the simulated GPU (default 528MiB, measured on H200)
Cluster (docs/slurm-simulation.md):
  --nodes N                N nodes, each of the --gpus/--gpu-config GPUs, behind Slurm (FIFO
                           queue with skip; first node in order whose free GRES covers the job)
  --cluster-policy LIST    comma-separated, each run on the same trace (default
                           mgb,whole-gpu,shard:4): mgb (--gres=gpumem:<peak>, mgbd policy mgb on
                           every node), whole-gpu (--gres=gpu:1), shard:S (--gres=shard:1, S
                           shards per GPU, no memory enforcement: out-of-memory crashes)
Scheduling:
  --policy LIST            comma-separated policies, each run on the same trace: mgb, mgb-sm,
                           single, cg:N, memory, schedgpu (default mgb,single: throughput vs single)
  --workers N              job slots, as `mgb batch --workers` (default 0: every arrived job)
  --max-slowdown PCT       the mgb runs bound co-run demand as mgbd --max-slowdown (default 0)
  --model FILE             slowdown model from --calibrate (default: uncalibrated, see docs)
Output:
  --out FILE               JSON report, the `mgb batch` format ({"runs": [...]} for several)
  --label TEXT             label in the report (default "simulated")
  --write-trace FILE       write the trace used (e.g. a generated one) and continue
  --utilisation-samples N  samples of GPU utilisation over time in the report (default 60)
Other modes:
  --calibrate FILES        fit the slowdown model to measured co-runs and print its error;
                           comma-separated files, each a co-run file ({"groups": ...}) or a
                           `mgb batch` result of jobs started together on one GPU (needs
                           --profiles TRACE for their solo profiles; warps per GPU from the
                           node flags); --write-model FILE saves the model for --model
  --from-batch FILE        convert a `mgb batch` result of solo runs into a trace: needs
                           --write-trace FILE
  --check-recorded FILE    re-simulate a recorded `mgb batch` run with the profiles of
                           --profiles TRACE (node, policy and workers from flags) and print the
                           makespan error; exit 1 if it is above --tolerance (default 0.10)
  --fit-recorded FILES     fit the slowdown model to recorded runs' makespans: comma-separated
                           `mgb batch` results, re-simulated as --check-recorded does with
                           --profiles TRACES (one for all, or one per run, comma-separated);
                           prints each run's error before and after; --write-model FILE saves
                           the model; exit 1 if a fitted error is above --tolerance
  --help                   this text
Exit status: 0 success, 1 a check failed, 2 bad usage or input.
)";

absl::StatusOr<uint64_t> ParseBytes(const std::string &text) {
  if (std::optional<uint64_t> bytes = core::ParseByteSize(text)) return *bytes;
  return absl::InvalidArgumentError("not a size: \"" + text + "\" (e.g. 512M, 80G, 141GiB)");
}

namespace {

absl::Status Bad(const std::string &flag, const std::string &why) {
  return absl::InvalidArgumentError(flag + ": " + why + " (see mgb simulate --help)");
}

template <typename T>
absl::Status ParseInteger(const std::string &flag, const std::string &text, T &out, T min) {
  if (!absl::SimpleAtoi(text, &out) || out < min) {
    return Bad(flag, "expected an integer >= " + std::to_string(min) + ", got \"" + text + "\"");
  }
  return absl::OkStatus();
}

absl::Status ParseSeconds(const std::string &flag, const std::string &text, double &out) {
  if (!absl::SimpleAtod(text, &out) || !std::isfinite(out) || out < 0) {
    return Bad(flag, "expected a non-negative number, got \"" + text + "\"");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SimulateFlags> ParseSimulateFlags(int argc, char **argv) {
  static const char *const kValueFlags[] = {"trace",         "jobs",
                                            "mix",           "seed",
                                            "arrival-gap",   "gpus",
                                            "gpu-memory",    "sms",
                                            "gpu-config",    "context-reserve",
                                            "policy",        "workers",
                                            "max-slowdown",  "model",
                                            "out",           "label",
                                            "write-trace",   "utilisation-samples",
                                            "calibrate",     "write-model",
                                            "from-batch",    "check-recorded",
                                            "fit-recorded",  "profiles",
                                            "tolerance",     "draw",
                                            "from",          "nodes",
                                            "cluster-policy"};
  SimulateFlags f;
  std::map<std::string, std::string> values;  // by "--name": checked below, each with its rule
  // The syntax every mgb command shares (cli::FlagParser); the help text is kSimulateUsage.
  cli::FlagParser parser("mgb simulate", "");
  for (const char *name : kValueFlags) {
    parser.Value(name, "VALUE", "",
                 [&values, key = std::string("--") + name](const std::string &v) {
                   values[key] = v;
                   return std::optional<std::string>();
                 });
  }
  parser.Bool("generate", &f.generate, "");
  const cli::FlagParser::Outcome outcome = parser.ParseQuietly(argc, argv, nullptr);
  if (outcome.error)
    return absl::InvalidArgumentError(*outcome.error + " (see mgb simulate --help)");
  if (outcome.version) {
    f.version_line = parser.VersionLine();
    return f;
  }
  f.help = outcome.help;
  auto has = [&](const char *flag) { return values.count(flag) > 0; };
  auto text = [&](const char *flag, std::string &out) {
    if (has(flag)) out = values[flag];
  };
  text("--trace", f.trace_file);
  text("--gpu-config", f.gpu_config_file);
  text("--model", f.model_file);
  text("--out", f.out_file);
  text("--label", f.label);
  text("--write-trace", f.write_trace_file);
  if (has("--calibrate")) {
    f.calibrate_files = absl::StrSplit(values["--calibrate"], ',', absl::SkipEmpty());
    if (f.calibrate_files.empty()) return Bad("--calibrate", "needs at least one file");
  }
  text("--write-model", f.write_model_file);
  text("--from-batch", f.from_batch_file);
  text("--check-recorded", f.check_recorded_file);
  if (has("--fit-recorded")) {
    f.fit_recorded_files = absl::StrSplit(values["--fit-recorded"], ',', absl::SkipEmpty());
    if (f.fit_recorded_files.empty()) return Bad("--fit-recorded", "needs at least one file");
  }
  text("--profiles", f.profiles_file);
  absl::Status s;
  if (s.ok() && has("--jobs"))
    s = ParseInteger<size_t>("--jobs", values["--jobs"], f.generator.jobs, 1);
  if (s.ok() && has("--seed"))
    s = ParseInteger<uint64_t>("--seed", values["--seed"], f.generator.seed, 0);
  if (s.ok() && has("--draw")) s = ParseInteger<size_t>("--draw", values["--draw"], f.draw_jobs, 1);
  if (s.ok() && has("--nodes"))
    s = ParseInteger<uint32_t>("--nodes", values["--nodes"], f.nodes, 1);
  if (s.ok() && has("--gpus"))
    s = ParseInteger<uint32_t>("--gpus", values["--gpus"], f.gpu_count, 1);
  if (s.ok() && has("--sms")) s = ParseInteger<uint32_t>("--sms", values["--sms"], f.sms, 1);
  if (s.ok() && has("--max-slowdown")) {
    s = ParseInteger<uint32_t>("--max-slowdown", values["--max-slowdown"], f.max_slowdown_percent,
                               0);
  }
  if (s.ok() && has("--workers"))
    s = ParseInteger<uint32_t>("--workers", values["--workers"], f.workers, 0);
  if (s.ok() && has("--utilisation-samples")) {
    s = ParseInteger<size_t>("--utilisation-samples", values["--utilisation-samples"],
                             f.utilisation_buckets, 1);
  }
  if (s.ok() && has("--arrival-gap")) {
    s = ParseSeconds("--arrival-gap", values["--arrival-gap"], f.generator.mean_arrival_gap_s);
  }
  if (s.ok() && has("--tolerance"))
    s = ParseSeconds("--tolerance", values["--tolerance"], f.tolerance);
  if (s.ok() && has("--mix")) {
    s = ParseMix(values["--mix"], f.generator);
    if (!s.ok()) s = Bad("--mix", std::string(s.message()));
  }
  if (s.ok() && has("--gpu-memory")) {
    auto bytes = ParseBytes(values["--gpu-memory"]);
    if (!bytes.ok() || *bytes == 0) {
      return Bad("--gpu-memory",
                 bytes.ok() ? "must be > 0" : std::string(bytes.status().message()));
    }
    f.gpu_memory_bytes = *bytes;
  }
  if (s.ok() && has("--context-reserve")) {
    auto bytes = ParseBytes(values["--context-reserve"]);
    if (!bytes.ok()) return Bad("--context-reserve", std::string(bytes.status().message()));
    f.context_bytes = *bytes;
  }
  if (!s.ok()) return s;
  if (has("--policy")) {
    f.policies = absl::StrSplit(values["--policy"], ',', absl::SkipEmpty());
    if (f.policies.empty()) return Bad("--policy", "needs at least one policy");
  }
  if (has("--from")) {
    f.draw_from = absl::StrSplit(values["--from"], ',', absl::SkipEmpty());
    if (f.draw_from.empty()) return Bad("--from", "needs at least one profiles file");
  }
  if (has("--cluster-policy")) {
    f.cluster_policies = absl::StrSplit(values["--cluster-policy"], ',', absl::SkipEmpty());
    if (f.cluster_policies.empty()) return Bad("--cluster-policy", "needs at least one policy");
    for (const std::string &name : f.cluster_policies) {
      if (auto policy = ParseClusterPolicy(name); !policy.ok()) {
        return Bad("--cluster-policy", std::string(policy.status().message()));
      }
    }
  }
  if (f.help) return f;
  const bool draw = f.draw_jobs > 0;
  const int modes = !f.calibrate_files.empty() + !f.from_batch_file.empty() +
                    !f.check_recorded_file.empty() + !f.fit_recorded_files.empty() +
                    (f.generate || !f.trace_file.empty() || draw);
  if (modes == 0) {
    return absl::InvalidArgumentError(
        "give --trace FILE, --generate or --draw N (or another mode; "
        "see --help)");
  }
  if (modes > 1) {
    return absl::InvalidArgumentError(
        "choose one of --trace/--generate/--draw, --calibrate, "
        "--from-batch, --check-recorded, --fit-recorded (see --help)");
  }
  if (f.generate && !f.trace_file.empty()) return Bad("--generate", "cannot be used with --trace");
  if (draw && (f.generate || !f.trace_file.empty())) {
    return Bad("--draw", "cannot be used with --trace or --generate");
  }
  if (draw && f.draw_from.empty())
    return Bad("--draw", "needs --from FILES (the profiles to draw from)");
  if (!draw && !f.draw_from.empty()) return Bad("--from", "only with --draw N");
  if (f.nodes == 0 && has("--cluster-policy"))
    return Bad("--cluster-policy", "only with --nodes N");
  if (f.nodes > 0) {
    if (!f.generate && f.trace_file.empty() && !draw) {
      return Bad("--nodes", "simulates a trace: give --trace, --generate or --draw");
    }
    if (has("--policy")) {
      return Bad("--policy", "is for one node; with --nodes choose --cluster-policy");
    }
    if (has("--workers")) {
      return Bad("--workers", "is for one node; with --nodes Slurm alone admits jobs to nodes");
    }
  }
  if (!f.from_batch_file.empty() && f.write_trace_file.empty()) {
    return Bad("--from-batch", "needs --write-trace FILE for the converted trace");
  }
  if (!f.check_recorded_file.empty() && f.profiles_file.empty()) {
    return Bad("--check-recorded", "needs --profiles TRACE (the jobs' solo profiles)");
  }
  if (!f.check_recorded_file.empty() && f.policies.size() != 1) {
    return Bad("--check-recorded", "needs exactly one --policy: the one the recorded run used");
  }
  if (!f.write_model_file.empty() && f.calibrate_files.empty() && f.fit_recorded_files.empty()) {
    return Bad("--write-model", "only with --calibrate or --fit-recorded");
  }
  if (!f.fit_recorded_files.empty()) {
    const std::vector<std::string> profiles =
        absl::StrSplit(f.profiles_file, ',', absl::SkipEmpty());
    if (profiles.size() != 1 && profiles.size() != f.fit_recorded_files.size()) {
      return Bad("--fit-recorded", "needs --profiles TRACES: one for all runs or one per run (" +
                                       std::to_string(f.fit_recorded_files.size()) + " runs, " +
                                       std::to_string(profiles.size()) + " traces)");
    }
    if (f.policies.size() != 1) {
      return Bad("--fit-recorded", "needs exactly one --policy: the one the recorded runs used");
    }
  }
  return f;
}

}  // namespace mgb::sim
