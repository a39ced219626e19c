// mgbd: the node's GPU scheduler daemon. See docs/service.md.
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

#include "daemon.h"
#include "flags.h"
#include "systemd.h"

namespace {

// Every connection costs a descriptor: take the hard limit (systemd's soft default is 1024).
void RaiseDescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

int main(int argc, char **argv) {
  mgb::server::DaemonOptions options;
  options.socket_path = "";
  int64_t verbosity = 0;
  mgb::cli::FlagParser flags(
      "mgbd",
      "mgbd --socket PATH [--gpus FILE] [--policy NAME] [--mps [--mps-dir DIR]]\n"
      "            [--context-reserve BYTES] [--run-default-mem SIZE] [--profile-store PATH]\n"
      "            [--slurm [--slurm-grants PATH] [--slurm-outside-jobs]] [--verbose N]\n\n"
      "The node scheduler: programs linked with libmgb (and `mgb run`) ask it for a GPU per task.\n"
      "Without --gpus the GPUs come from NVML (libnvidia-ml.so.1).");
  flags.String("socket", &options.socket_path,
               "Unix socket to listen on (created 0660; a stale one is replaced)");
  flags.String(
      "gpus", &options.gpus_file,
      "JSON GPU description instead of NVML: {\"gpus\": [{\"name\", \"memory_bytes\", \"sms\"}]}");
  flags.String("policy", &options.policy, "mgb (default), mgb-sm, single, cg:N, memory, schedgpu");
  flags.Bool("spread-tasks", &options.spread_tasks,
             "place each task by the policy alone, even away from the GPUs its process already "
             "uses (default: a process's tasks stay on its GPUs while they fit there)");
  flags.Int("first-run-settle-ms", &options.first_run_settle_ms,
            "a program without a learned peak joins a GPU only once no other such program there "
            "has begun or grown for this long, so two never grow side by side into "
            "out-of-memory (default 5000; 0: off)");
  flags.Int("max-slowdown", &options.max_slowdown_percent,
            "mgb policy: place a task on a busy GPU only while the SM demand of the tasks there "
            "(resident blocks of their widest launches, registers and shared memory counted) "
            "stays within 100+PCT% of the GPU, so co-running kernels are predicted to slow down "
            "by at most PCT%; an idle GPU takes any task (default 0: no bound)");
  flags.Bool("queue-priority", &options.queue_priority,
             "order waiting tasks by their session's priority (MGB_QUEUE_PRIORITY in the client, "
             "higher first), then arrival; default: arrival only, since any client may ask for "
             "a high priority");
  flags.Bool("mps", &options.mps,
             "start (or check) the MPS control daemon; clients get its pipe dir");
  flags.String("mps-dir", &options.mps_directory,
               "directory for MPS pipe/ and log/ (default /tmp/mgb-mps)");
  flags.Size("context-reserve", &options.context_reserve_bytes,
             "memory charged per process per GPU for its CUDA context (default 528M)");
  flags.Size("run-default-mem", &options.run_default_memory,
             "what a program started without a size (`mgb run` without --mem) reserves before "
             "mgbd learned its peak (default 1G)");
  flags.String("profile-store", &options.profile_store,
               "file keeping each program's learned memory peak per user and command line "
               "(default: mgbd-profiles.tsv beside the socket; none: in memory only)");
  flags.String("metrics", &options.metrics_address,
               "serve Prometheus metrics and /healthz over HTTP on [HOST:]PORT (loopback unless "
               "a host is named; default: off)");
  flags.Bool("slurm", &options.slurm,
             "Slurm node (docs/slurm.md): each process's tasks count against its job's GPU memory "
             "grant (--gres=gpumem), set by `mgb slurm-hook prolog` and ended by the epilog");
  flags.Bool("slurm-outside-jobs", &options.slurm_outside_jobs,
             "with --slurm, let users' processes that are in no Slurm job open sessions, "
             "unlimited (default: only root's and mgbd's own)");
  flags.String("slurm-grants", &options.slurm_grants,
               "file keeping the jobs' grants across restarts (default: mgbd-slurm-grants.tsv "
               "beside the socket; none: in memory only)");
  flags.Int("verbose", &verbosity, "1: log one line per scheduling decision to stderr");
  int64_t max_connections = static_cast<int64_t>(options.limits.max_connections);
  int64_t max_per_user = static_cast<int64_t>(options.limits.max_connections_per_user);
  flags.Int("max-connections", &max_connections,
            "connections open at once, all users (default 12288, and always below the descriptor "
            "limit; a program uses three); more are refused, never left to exhaust it");
  flags.Int("max-connections-per-user", &max_per_user,
            "connections open at once per user id (default 3072)");
  if (std::optional<int> exit_code = flags.Parse(argc, argv, nullptr)) return *exit_code;
  if (options.socket_path.empty()) return flags.Fail("--socket PATH is required");
  if (options.run_default_memory == 0) return flags.Fail("--run-default-mem must be above 0");
  if (options.first_run_settle_ms < 0 || options.first_run_settle_ms > 3'600'000) {
    return flags.Fail("--first-run-settle-ms must be in 0..3600000");
  }
  if (options.max_slowdown_percent < 0 || options.max_slowdown_percent > 10000) {
    return flags.Fail("--max-slowdown must be a percentage in 0..10000");
  }
  if (options.max_slowdown_percent > 0 && options.policy != "mgb") {
    return flags.Fail("--max-slowdown works with --policy mgb only (got '" + options.policy + "')");
  }
  options.verbosity = static_cast<int>(verbosity);
  if (max_connections < 1) return flags.Fail("--max-connections must be >= 1");
  if (max_per_user < 1) return flags.Fail("--max-connections-per-user must be >= 1");
  options.limits.max_connections = static_cast<size_t>(max_connections);
  options.limits.max_connections_per_user = static_cast<size_t>(max_per_user);
  RaiseDescriptorLimit();

  // Block the shutdown signals before any thread starts; one thread waits for them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  absl::StatusOr<std::unique_ptr<mgb::server::Daemon>> daemon = mgb::server::Daemon::Start(options);
  if (!daemon.ok()) {
    std::fprintf(stderr, "mgbd: %s\n", std::string(daemon.status().message()).c_str());
    return 1;
  }
  const std::string bound =
      options.max_slowdown_percent > 0
          ? ", max slowdown " + std::to_string(options.max_slowdown_percent) + "%"
          : "";
  std::fprintf(stderr, "mgbd: listening on %s (policy %s%s%s%s)\n", options.socket_path.c_str(),
               options.policy.c_str(), options.spread_tasks ? ", tasks spread" : "",
               options.queue_priority ? ", queue priorities" : "", bound.c_str());
  if (const std::string url = (*daemon)->metrics_url(); !url.empty()) {
    std::fprintf(stderr, "mgbd: metrics on %s\n", url.c_str());
  }
  mgb::server::NotifyReady();  // Type=notify under systemd
  int received = 0;
  sigwait(&stop_signals, &received);
  std::fprintf(stderr, "mgbd: %s, shutting down\n", received == SIGINT ? "SIGINT" : "SIGTERM");
  (*daemon)->Shutdown();
  return 0;
}
