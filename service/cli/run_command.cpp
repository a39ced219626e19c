// mgb run [--mem SIZE] [--max-mem SIZE] [--warps N] [--socket PATH] -- PROGRAM ARGS: an
// unmodified program as one task. Waits for a GPU, shows the program only that GPU
// (CUDA_VISIBLE_DEVICES), preloads the driver-level guard that counts its allocations and grows its
// reservation (run_guard.h), forwards signals to it, reports its GPU memory, releases the GPU when
// it exits, returns its status.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "child_gpu_memory.h"
#include "program_identity.h"
#include "run_tasks.h"
#include "run_usage.h"
#include "commands.h"
#include "flags.h"
#include "mgb/client.h"
#include "mgb/core/byte_size.h"
#include "run_guard.h"

extern char **environ;

namespace mgb::cli {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
// How often the child's GPU memory is read while it runs.
constexpr timespec kUsagePeriod = {0, 500'000'000};

// Frameworks that take most of a GPU up front unless told not to (docs/frameworks.md): JAX (75% of
// it) and TensorFlow (all of it). Under mgb the grant grows as they allocate, and what they hold
// is what mgbd learns, so they allocate on demand unless the user chose their own setting.
std::vector<std::pair<std::string, std::string>> OnDemandFrameworks() {
  std::vector<std::pair<std::string, std::string>> set;
  bool jax_configured = false;
  for (char **e = environ; *e != nullptr; ++e) {
    jax_configured = jax_configured || std::strncmp(*e, "XLA_PYTHON_CLIENT_", 18) == 0;
  }
  if (!jax_configured) set.emplace_back("XLA_PYTHON_CLIENT_PREALLOCATE", "false");
  if (std::getenv("TF_FORCE_GPU_ALLOW_GROWTH") == nullptr) {
    set.emplace_back("TF_FORCE_GPU_ALLOW_GROWTH", "true");
  }
  return set;
}

// The child's environment: ours, with the CUDA variables that pin it to the granted GPU and the
// guard's. hard_limit: the most it may ever hold (0: no limit beyond the guard's).
std::vector<std::string> ChildEnvironment(const std::vector<Placement> &placements,
                                          const SessionDetails &session, uint64_t hard_limit,
                                          const RunGuard *guard, bool keep_prealloc) {
  // The run's GPUs in its tasks' order: CUDA ordinal k is the ledger's GPU k.
  std::string visible;
  for (const Placement &p : placements) {
    visible += (visible.empty() ? "" : ",") +
               (p.gpu_uuid.empty() ? std::to_string(p.gpu_index) : p.gpu_uuid);
  }
  std::vector<std::pair<std::string, std::string>> set = {{"CUDA_VISIBLE_DEVICES", visible}};
  if (!keep_prealloc) {
    for (auto &entry : OnDemandFrameworks()) set.push_back(std::move(entry));
  }
  if (!session.mps_pipe_directory.empty()) {
    set.emplace_back("CUDA_MPS_PIPE_DIRECTORY", session.mps_pipe_directory);
    if (hard_limit != 0) {
      // A per-client cap the MPS server enforces, the backstop behind the guard: the program
      // cannot take more than its limit plus its CUDA context, which mgbd charges separately (the
      // cap counts both: measured on H200, a cap of exactly the grant refused a 100 GiB program
      // its 100 GiB).
      const uint64_t capped = hard_limit + session.context_reserve_bytes;
      const uint64_t mib = (capped + (1 << 20) - 1) >> 20;
      std::string limits;
      for (size_t k = 0; k < placements.size(); ++k) {
        limits += (k == 0 ? "" : ",") + std::to_string(k) + "=" + std::to_string(mib) + "M";
      }
      set.emplace_back("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", limits);
    }
  }
  if (guard != nullptr) {
    for (auto &entry : guard->Environment()) set.push_back(std::move(entry));
  }
  std::vector<std::string> env;
  for (char **e = environ; *e != nullptr; ++e) {
    bool replaced = false;
    for (const auto &[name, value] : set)
      replaced = replaced || std::strncmp(*e, (name + "=").c_str(), name.size() + 1) == 0;
    if (!replaced) env.emplace_back(*e);
  }
  for (const auto &[name, value] : set) env.push_back(name + "=" + value);
  return env;
}

std::vector<char *> Pointers(std::vector<std::string> &strings) {
  std::vector<char *> out;
  for (std::string &s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Starts the program: with the default signal mask, and killed should `mgb run` die first
// (PR_SET_PDEATHSIG): mgbd frees the run's grant when its session ends, so the program must not
// run on with memory no one counts. errno of a failed exec, or 0. Between fork and exec the child
// calls only what is safe after a fork in a threaded process.
int Spawn(pid_t *child, char **argv, char **envp, const sigset_t &original_mask) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return errno;
  const pid_t parent = getpid();
  *child = fork();
  if (*child < 0) {
    const int error = errno;
    close(report[0]);
    close(report[1]);
    return error;
  }
  if (*child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // `mgb run` died before the line above
    sigprocmask(SIG_SETMASK, &original_mask, nullptr);
    execvpe(argv[0], argv, envp);
    const int error = errno;
    (void)!write(report[1], &error, sizeof error);
    _exit(127);
  }
  close(report[1]);
  int error = 0;
  ssize_t n;
  while ((n = read(report[0], &error, sizeof error)) < 0 && errno == EINTR) {
  }
  close(report[0]);
  if (n != sizeof error) return 0;  // the exec closed the pipe: the program runs
  waitpid(*child, nullptr, 0);
  return error;
}

// Starts the program (Spawn) and waits for it, forwarding our signals and calling on_tick(child)
// every kUsagePeriod without one. Returns its exit status (128 + signal if killed), or 127 if it
// could not start.
int SpawnAndWait(const char *self, std::vector<std::string> args, std::vector<std::string> env,
                 const sigset_t &waited, const sigset_t &original_mask,
                 const std::function<void(pid_t)> &on_tick) {
  std::vector<char *> argv = Pointers(args), envp = Pointers(env);
  pid_t child = 0;
  if (const int rc = Spawn(&child, argv.data(), envp.data(), original_mask); rc != 0) {
    std::fprintf(stderr, "%s: cannot run %s: %s\n", self, argv[0], std::strerror(rc));
    return 127;
  }
  while (true) {
    siginfo_t info;
    const int sig = sigtimedwait(&waited, &info, &kUsagePeriod);
    if (sig < 0) {
      if (errno == EAGAIN) on_tick(child);
      continue;  // or EINTR
    }
    if (sig != SIGCHLD) {
      kill(child, sig);
      continue;
    }
    int status = 0;
    const pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
}

}  // namespace

int RunRunCommand(int argc, char **argv) {
  uint64_t memory = 0, max_memory = 0;
  int64_t warps = 1, gpus = 1;
  bool no_guard = false, no_spill = false, keep_prealloc = false;
  std::string socket = SocketFromEnvironment();
  FlagParser flags(
      argv[0],
      "mgb run [--mem SIZE] [--max-mem SIZE] [--gpus N] [--warps N] [--socket PATH]\n"
      "        -- PROGRAM [ARGS...]\n\n"
      "Runs PROGRAM as one GPU task: waits until mgbd grants it memory on a GPU, shows\n"
      "the program only that GPU (CUDA_VISIBLE_DEVICES) and preloads mgb's guard\n"
      "(libmgb-guard.so), which counts every device allocation and grows the grant\n"
      "through mgbd when the program needs more (waiting for room, never crashing\n"
      "another program). Without --mem the first grant is what this command line\n"
      "(yours) used at its peak last time, else mgbd's default; `mgb status` shows the\n"
      "program it was learned for (the executable, and an interpreter's script). When\n"
      "mgbd cannot grant a grow without waiting forever (programs growing side by side),\n"
      "the allocation gets host memory instead (slower, not lost). JAX and TensorFlow\n"
      "allocate on demand unless you set their own variables. With --gpus N the\n"
      "program gets N GPUs (one process per GPU, torchrun, NCCL), each counted apart.\n"
      "Releases the GPUs when the program exits and returns its exit status (127: it\n"
      "could not start).");
  flags.Size("mem", &memory,
             "the first grant, per GPU (default: the learned peak, else mgbd's default)");
  flags.Size("max-mem", &max_memory,
             "the most the program may hold, per GPU; past it allocations fail with "
             "out-of-memory (under MPS also the server's pinned limit)");
  flags.Int("gpus", &gpus,
            "GPUs the program uses (default 1, at most 8): all are granted before it starts, "
            "and CUDA_VISIBLE_DEVICES lists them");
  flags.Int("warps", &warps, "warps the program keeps busy, for the mgb policy (default 1)");
  flags.Bool("no-guard", &no_guard,
             "do not preload the guard: the program holds its first grant only (a hard limit "
             "under MPS)");
  flags.Bool("no-spill", &no_spill,
             "when a grow cannot be granted without waiting forever, fail the allocation with "
             "out-of-memory instead of giving host memory");
  flags.Bool("keep-prealloc", &keep_prealloc,
             "leave JAX's and TensorFlow's preallocation as they are (default: on demand, "
             "XLA_PYTHON_CLIENT_PREALLOCATE=false and TF_FORCE_GPU_ALLOW_GROWTH=true, unless "
             "set)");
  flags.String("socket", &socket, "mgbd's socket (default: $MGB_SOCKET or /tmp/mgbd.sock)");
  std::vector<std::string> program;
  if (std::optional<int> exit_code = flags.Parse(argc, argv, &program)) return *exit_code;
  if (warps < 1 || warps > (int64_t{1} << 31)) return flags.Fail("--warps must be in 1..2^31");
  if (gpus < 1 || gpus > static_cast<int64_t>(guard::kMaxRunGpus)) {
    return flags.Fail("--gpus must be in 1.." + std::to_string(guard::kMaxRunGpus));
  }
  if (program.empty()) return flags.Fail("no PROGRAM after --");
  if (max_memory != 0 && memory > max_memory) {
    return flags.Fail("--mem " + core::FormatBytes(memory) + " is more than --max-mem " +
                      core::FormatBytes(max_memory));
  }
  std::optional<std::string> guard_library;
  if (!no_guard) {
    // Fail closed: a run whose allocations would go uncounted starts only when asked to.
    guard_library = RunGuard::FindLibrary();
    if (!guard_library) {
      std::fprintf(stderr,
                   "%s: libmgb-guard.so not found (set MGB_GUARD_LIB), so the program's memory "
                   "cannot be counted; --no-guard runs it within its first grant\n",
                   argv[0]);
      return 1;
    }
    if (std::optional<std::string> why = RunGuard::Unloadable(*guard_library)) {
      std::fprintf(stderr,
                   "%s: the guard %s cannot be loaded (%s), so the program's memory cannot be "
                   "counted; --no-guard runs it within its first grant\n",
                   argv[0], guard_library->c_str(), why->c_str());
      return 1;
    }
  }

  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(socket, getpid(), program[0]);
  if (!client.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[0], std::string(client.status().message()).c_str());
    return 1;
  }
  LaunchShape shape;
  shape.grid.x = static_cast<uint32_t>(warps);
  shape.block.x = 32;  // one warp per block: warps = N
  const char *path = std::getenv("PATH");
  std::error_code cwd_error;
  const ProgramIdentity identity =
      IdentifyProgram(program, path != nullptr ? path : "/usr/bin:/bin",
                      std::filesystem::current_path(cwd_error).string());
  absl::StatusOr<std::vector<Placement>> placed = BeginRunTasks(
      **client, identity, memory, static_cast<int>(gpus), shape, "mgb run " + program[0]);
  if (!placed.ok()) {
    std::fprintf(stderr, "%s: mgbd refused the task: %s\n", argv[0],
                 std::string(placed.status().message()).c_str());
    return 1;
  }
  const std::vector<Placement> &placements = *placed;
  auto end_tasks = [&] {
    for (const Placement &p : placements) {
      if (absl::Status end = (*client)->TaskEnd(p.task_id); !end.ok()) {
        std::fprintf(stderr, "%s: releasing GPU %u: %s\n", argv[0], p.gpu_index,
                     std::string(end.message()).c_str());
      }
    }
  };
  // While waiting above, Ctrl-C simply ends us (and so the session). From here on our signals go
  // to sigwaitinfo and on to the program.
  sigset_t waited, original_mask;
  sigemptyset(&waited);
  for (int sig : kForwarded) sigaddset(&waited, sig);
  sigaddset(&waited, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &waited, &original_mask);
  std::unique_ptr<RunGuard> guard;
  if (guard_library) {
    std::vector<RunGuard::GpuTask> tasks;
    for (const Placement &p : placements) tasks.push_back({p.task_id, p.memory_bytes});
    std::string error;
    guard = RunGuard::Start(**client, tasks, max_memory, !no_spill, *guard_library, &error);
    if (!guard) {
      std::fprintf(stderr,
                   "%s: %s, so the program's memory cannot be counted; --no-guard runs it within "
                   "its first grant\n",
                   argv[0], error.c_str());
      end_tasks();
      return 1;
    }
  }
  // Without the guard the first grant is all the program may hold.
  const uint64_t hard_limit = guard ? max_memory : placements[0].memory_bytes;
  // mgbd counts what programs allocated twice (in NVML's used memory and as our unallocated
  // grant) unless we say how much of the grant the program holds: the guard's count when it is
  // active, else NVML's reading of the child's memory (one GPU).
  const std::unique_ptr<ChildGpuMemory> meter =
      placements.size() == 1 ? ChildGpuMemory::Open(placements[0].gpu_uuid) : nullptr;
  RunUsage usage(**client, placements, guard.get());
  usage.Report(std::vector<uint64_t>(placements.size(), 0), {});  // the room, from the start
  auto report_usage = [&](pid_t child) {
    if (guard) {
      const RunGuard::Usage counted = guard->Read();
      if (counted.guarded) return usage.Report(counted.allocated, counted.peak);
    }
    if (meter && child > 0) {
      if (std::optional<uint64_t> bytes = meter->Bytes(child)) usage.Report({*bytes}, {});
    }
  };
  const int status = SpawnAndWait(
      argv[0], program,
      ChildEnvironment(placements, (*client)->session(), hard_limit, guard.get(), keep_prealloc),
      waited, original_mask, report_usage);
  report_usage(0);  // the final peak, which mgbd keeps for this program's next run
  guard.reset();
  end_tasks();
  return status;
}

}  // namespace mgb::cli
