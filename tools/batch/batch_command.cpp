#include "batch_command.h"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/str_split.h"
#include "flags.h"
#include "mgb/client.h"
#include "mgb/core/byte_size.h"
#include "mgb.pb.h"
#include "adaptive_workers.h"
#include "gpu_sampler.h"
#include "host_memory.h"
#include "job_list.h"
#include "mix_generator.h"
#include "report.h"
#include "run_history.h"
#include "runner.h"

namespace mgb::batch {
namespace {

constexpr const char *kUsage =
    R"(mgb batch --jobs FILE --out FILE [--workers N|auto] [--socket PATH] [--label TEXT]
            [--logs DIR] [--nvml-period SECONDS] [--no-nvml] [--order fifo|longest-first]
            [--history RUN.json[,RUN.json...]] [--host-reserve SIZE|off]
       mgb batch --generate --out FILE [--count N] [--ratio L:S] [--seed N] [--gpu-gib G]
            [--max-gib G] [--bin-dir DIR] [--target-seconds S] [--gpu-fraction F]
            [--calibration FILE]

Run: starts the jobs of FILE ({"jobs": [{"name", "argv", "memory_bytes", "host_memory_bytes",
"arrival_s"}]}) as child processes, at most N at once (default 2), FIFO by arrival; records per
job queued, started, ended, exit status, out-of-memory death, kernel times (MGB_KERNEL_MS lines)
and peak host memory (host_peak_bytes); writes JSON to --out, prints progress and a summary table
(makespan, throughput, mean turnaround, crashes).
Host memory: a job starts only when the host's MemAvailable, less what the running jobs are still
expected to take, covers its expected peak plus --host-reserve (default 5% of the host's memory,
at least 1 GiB; off: no gate); jobs behind a held job wait with it; a job starts when nothing
runs whatever it needs. A job's expected peak is the largest host_peak_bytes of its command line in
the --history runs or among this run's finished jobs, else its host_memory_bytes estimate, else
unknown (only the reserve is asked for). mgbd guards GPU memory; a program takes its host
buffers before it asks mgbd, so jobs waiting for a GPU hold host memory.
With --order longest-first, the arrived job that ran longest in the --history runs (earlier
--out files; the median of its successful runs, matched by command line) starts first, and jobs
never seen there before all others: the long jobs set the makespan, the short ones fill in beside
them; each job gets MGB_QUEUE_PRIORITY (longer, higher), which an mgbd run with --queue-priority
uses to keep that order among jobs waiting for a GPU.
With --workers auto (needs mgbd at --socket) the count adapts: one job per GPU at first, then
every second one more per GPU while no task waits in mgbd's queue and the GPUs ran kernels less
than 80% of the time (NVML), one fewer (not below one per GPU) while a task waits; the JSON's workers_auto
lists each change as [t_s, count] and workers the largest count. Job output goes to --logs (default: OUT.logs/). --socket is exported to jobs as MGB_SOCKET: the
policy is whatever the mgbd there runs (mgbd --policy mgb|mgb-sm|single|cg:N|memory).
GPU utilisation is sampled through NVML every --nvml-period seconds (default 0.5) when present
($MGB_NVML_LIBRARY overrides libnvidia-ml.so.1), and with it each job's GPU memory (its processes
and their descendants, summed over GPUs): memory_samples [[t_s, bytes], ...] and
peak_memory_bytes per job; where NVML cannot tell (MPS) the JSON's per_process_memory says why.

Generate (--generate): writes a job list of --count jobs (default 16) at large:small --ratio
(default 1:1), seeded (default 1), drawn from the six workloads of examples/workloads; small jobs
take 6-25% of --gpu-gib (default 140), large ones 26-70% (at most --max-gib, default 100); --iters
is chosen so each job runs about --target-seconds (default 30) alone, from the per-iteration
costs in --calibration (written by scripts/gpu/workloads.sh) or built-in estimates. With
--gpu-fraction F below 1 (default 1) kernels fill F of that time and host phases the rest: the
job's input phase, then --snapshots (its state streamed back and checked on the host), as many
as the calibration's host costs say fit.
Binaries are named --bin-dir/<workload> (default build/workloads).

Exit status: 0 all jobs exited 0; 1 a job crashed or failed its check; 2 bad usage or input.
)";

constexpr const char *kMeminfo = "/proc/meminfo";

volatile std::sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

// The flags as given (by "--name"), and the parser that reports what is wrong.
struct Args {
  std::map<std::string, std::string> values;
  bool generate = false, no_nvml = false;
  const cli::FlagParser *flags = nullptr;
};

struct ValuedFlag {
  const char *name;
  const char *value_name;
  const char *help;
};
constexpr ValuedFlag kValued[] = {
    {"jobs", "FILE", "the job list to run"},
    {"out", "FILE", "where the run's JSON (or --generate's job list) goes"},
    {"workers", "N|auto", "jobs running at once (default 2); auto: adapted to the node"},
    {"socket", "PATH", "mgbd's socket, exported to jobs as MGB_SOCKET"},
    {"label", "TEXT", "a label recorded in the JSON"},
    {"logs", "DIR", "job output (default OUT.logs/)"},
    {"nvml-period", "SECONDS", "NVML sampling period (default 0.5)"},
    {"order", "fifo|longest-first", "which arrived job starts next (default fifo)"},
    {"history", "FILES", "earlier runs' --out JSON, comma-separated (run times, host peaks)"},
    {"host-reserve", "SIZE|off", "host memory kept free beyond the jobs' expected peaks"},
    {"count", "N", "--generate: jobs (default 16)"},
    {"ratio", "L:S", "--generate: large:small (default 1:1)"},
    {"seed", "N", "--generate: random seed (default 1)"},
    {"gpu-gib", "G", "--generate: the GPU size jobs are drawn for (default 140)"},
    {"max-gib", "G", "--generate: the largest job (default 100)"},
    {"bin-dir", "DIR", "--generate: where the workload binaries are (default build/workloads)"},
    {"target-seconds", "S", "--generate: each job's solo run time (default 30)"},
    {"gpu-fraction", "F", "--generate: kernels' share of that time (default 1)"},
    {"calibration", "FILE", "--generate: per-iteration costs (scripts/gpu/workloads.sh)"},
};

// Number flag with a range check; sets error naming the flag.
// --workers auto: the controller, fed by mgbd's queue (a Status call per decision) and the
// sampler's recent kernel time.
class AutoWorkers {
 public:
  static absl::StatusOr<AutoWorkers> Connect(const std::string &socket, size_t jobs) {
    if (socket.empty()) return absl::InvalidArgumentError("needs --socket (mgbd's queue)");
    absl::StatusOr<std::unique_ptr<Client>> client =
        Client::Connect(socket, static_cast<int64_t>(getpid()), "mgb batch --workers auto");
    if (!client.ok()) return client.status();
    absl::StatusOr<v1::StatusReply> status = (*client)->Status();
    if (!status.ok()) return status.status();
    AdaptiveWorkers::Options options;
    options.gpus = std::max(1, status->gpus_size());
    options.max = static_cast<int>(std::max<size_t>(1, std::min<size_t>(jobs, 4096)));
    options.period_s = kPeriodS;
    return AutoWorkers(*std::move(client), options);
  }
  int Slots(double now_s, GpuSampler *sampler) {
    if (!controller_.Due(now_s)) return controller_.slots();
    NodeLoad load;
    if (absl::StatusOr<v1::StatusReply> status = client_->Status(); status.ok()) {
      load.waiting_tasks =
          static_cast<uint32_t>(status->waiting_size()) + status->waiting_not_listed();
    }
    if (sampler != nullptr) load.busy = sampler->RecentBusy(kPeriodS);
    return controller_.Observe(now_s, load);
  }
  const std::vector<std::pair<double, int>> &history() const { return controller_.history(); }

 private:
  static constexpr double kPeriodS = 1.0;
  AutoWorkers(std::unique_ptr<Client> client, AdaptiveWorkers::Options options)
      : client_(std::move(client)), controller_(options) {}
  std::unique_ptr<Client> client_;
  AdaptiveWorkers controller_;
};

double Number(const Args &args, const std::string &flag, double fallback, double lo, double hi,
              std::string &error) {
  auto it = args.values.find(flag);
  if (it == args.values.end()) return fallback;
  char *end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != '\0' || v < lo || v > hi) {
    char range[64];
    std::snprintf(range, sizeof(range), "[%g, %g]", lo, hi);
    error = flag + " must be a number in " + range + ", got '" + it->second + "'";
    return fallback;
  }
  return v;
}

std::string Value(const Args &args, const std::string &flag, const std::string &fallback = "") {
  auto it = args.values.find(flag);
  return it == args.values.end() ? fallback : it->second;
}

bool WriteFile(const std::string &path, const std::string &text) {
  std::ofstream out(path);
  out << text;
  return static_cast<bool>(out);
}

int Generate(const Args &args) {
  std::string error;
  MixSpec spec;
  spec.jobs = static_cast<int>(Number(args, "--count", 16, 1, 100000, error));
  spec.seed = static_cast<uint64_t>(Number(args, "--seed", 1, 0, 1e18, error));
  spec.gpu_gib = Number(args, "--gpu-gib", 140, 1, 1e6, error);
  spec.max_gib = Number(args, "--max-gib", 100, 0.1, 1e6, error);
  spec.target_seconds = Number(args, "--target-seconds", 30, 0.01, 1e6, error);
  spec.gpu_fraction = Number(args, "--gpu-fraction", 1, 0.01, 1, error);
  spec.bin_dir = Value(args, "--bin-dir", spec.bin_dir);
  if (!ParseRatio(Value(args, "--ratio", "1:1"), spec.large, spec.small))
    error = "--ratio must look like L:S (e.g. 3:1), got '" + Value(args, "--ratio") + "'";
  if (args.values.count("--calibration"))
    if (absl::Status loaded = LoadIterCosts(Value(args, "--calibration"), spec.costs); !loaded.ok())
      error = std::string(loaded.message());
  if (!error.empty()) return args.flags->Fail("--generate: " + error);
  std::vector<Job> jobs = GenerateMix(spec);
  std::string out = Value(args, "--out");
  if (!WriteFile(out, JobListToJson(jobs)))
    return args.flags->Fail("--out " + out + ": cannot write");
  std::cout << "wrote " << jobs.size() << " jobs (" << spec.large << ":" << spec.small
            << " large:small, seed " << spec.seed << ") to " << out << "\n";
  return 0;
}

int Run(const Args &args) {
  std::string error;
  RunnerOptions options;
  const bool auto_workers = Value(args, "--workers") == "auto";
  if (!auto_workers) {
    options.workers = static_cast<int>(Number(args, "--workers", 2, 1, 4096, error));
    if (!error.empty()) error += " or 'auto'";
  }
  double nvml_period = Number(args, "--nvml-period", 0.5, 0.01, 3600, error);
  if (!args.values.count("--jobs")) error = "--jobs FILE is required (or --generate)";
  if (!error.empty()) return args.flags->Fail(error);
  absl::StatusOr<std::vector<Job>> jobs = LoadJobList(Value(args, "--jobs"));
  if (!jobs.ok()) return args.flags->Fail("--jobs: " + std::string(jobs.status().message()));
  std::string out = Value(args, "--out");
  options.socket = Value(args, "--socket");
  options.log_dir = Value(args, "--logs", out + ".logs");
  std::error_code ec;
  std::filesystem::create_directories(options.log_dir, ec);
  if (ec) return args.flags->Fail("--logs " + options.log_dir + ": " + ec.message());
  const std::string order = Value(args, "--order", "fifo");
  if (order != "fifo" && order != "longest-first")
    return args.flags->Fail("--order must be fifo or longest-first, got '" + order + "'");
  if (order == "longest-first" && !args.values.count("--history"))
    return args.flags->Fail(
        "--order longest-first needs --history RUN.json (an earlier run's --out)");
  if (args.values.count("--history")) {
    const std::vector<std::string> paths =
        absl::StrSplit(Value(args, "--history"), ',', absl::SkipEmpty());
    absl::StatusOr<RunHistory> history = LoadRunHistory(paths);
    if (!history.ok())
      return args.flags->Fail("--history: " + std::string(history.status().message()));
    if (order == "longest-first") options.expected_s = ExpectedRunTimes(*jobs, *history);
    options.host_peaks = history->host_peak_bytes;
  }
  std::optional<HostMemoryGate> host_gate;
  if (const std::string reserve = Value(args, "--host-reserve", "auto"); reserve != "off") {
    std::optional<uint64_t> bytes;
    if (reserve == "auto") {
      bytes = DefaultHostReserve(ReadMeminfoField(kMeminfo, "MemTotal").value_or(0));
    } else {
      bytes = core::ParseByteSize(reserve);
    }
    if (!bytes)
      return args.flags->Fail("--host-reserve must be a size (e.g. 8G, 512MiB) or off, got '" +
                              reserve + "'");
    host_gate.emplace(*bytes, kMeminfo);
    options.host_gate = &*host_gate;
  }
  options.progress = &std::cout;
  options.stop = &g_stop;
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);

  RunInfo info;
  info.label = Value(args, "--label");
  info.jobs_file = Value(args, "--jobs");
  info.socket = options.socket;
  info.workers = options.workers;
  info.order = order;
  if (host_gate) info.host_reserve_bytes = static_cast<int64_t>(host_gate->reserve());
  std::unique_ptr<GpuSampler> sampler;
  if (args.no_nvml) {
    info.gpu_note = "sampling off (--no-nvml)";
  } else {
    sampler = GpuSampler::Start(nvml_period, &info.gpu_note);
  }
  options.watcher = sampler.get();
  std::optional<AutoWorkers> automatic;
  if (auto_workers) {
    absl::StatusOr<AutoWorkers> made = AutoWorkers::Connect(options.socket, jobs->size());
    if (!made.ok())
      return args.flags->Fail("--workers auto: " + std::string(made.status().message()));
    automatic.emplace(*std::move(made));
    options.slots = [&automatic, &sampler](double now_s) {
      return automatic->Slots(now_s, sampler.get());
    };
  }
  BatchResult result = RunBatch(*jobs, options);
  if (automatic) {
    info.worker_changes = automatic->history();
    for (const auto &[t_s, count] : info.worker_changes)
      info.workers = std::max(info.workers, count);
  }
  SamplerRecord sampled = sampler ? sampler->Stop() : SamplerRecord{};
  info.per_process_memory = sampler ? sampled.per_process_memory : "unavailable: " + info.gpu_note;
  AttachJobMemory(std::move(sampled.job_memory), &result);
  const std::vector<GpuSample> &samples = sampled.gpu_samples;

  PrintSummaryTable(std::cout, result, info);
  if (!WriteFile(out, BatchResultToJson(result, info, samples))) {
    return args.flags->Fail("--out " + out + ": cannot write");
  }
  Summary s = Summarize(result);
  return (s.crashed || s.check_failed || s.not_run) ? 1 : 0;
}

}  // namespace
}  // namespace mgb::batch

int RunBatchCommand(int argc, char **argv) {
  using namespace mgb::batch;
  Args args;
  // "mgb batch" from mgb's dispatcher, "mgb-batch" as a program of its own.
  const std::string command = std::filesystem::path(argv[0]).filename().string();
  mgb::cli::FlagParser flags(command, kUsage);
  args.flags = &flags;
  for (const ValuedFlag &f : kValued) {
    flags.Value(f.name, f.value_name, f.help,
                [&args, key = std::string("--") + f.name](const std::string &v) {
                  args.values[key] = v;
                  return std::optional<std::string>();
                });
  }
  flags.Bool("generate", &args.generate, "write a job list instead of running one");
  flags.Bool("no-nvml", &args.no_nvml, "do not sample GPUs through NVML");
  if (std::optional<int> exit_code = flags.Parse(argc, argv, nullptr)) return *exit_code;
  if (!args.values.count("--out")) return flags.Fail("--out FILE is required");
  return args.generate ? Generate(args) : Run(args);
}
