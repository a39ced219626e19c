// mgb run --mem SIZE [--warps N] [--socket PATH] -- PROGRAM ARGS: an unmodified program as one
// task. Waits for a GPU, shows the program only that GPU (CUDA_VISIBLE_DEVICES; under MPS also a
// hard memory cap), forwards signals to it, reports its GPU memory (NVML GPUs), releases the GPU
// when it exits, returns its status.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "child_gpu_memory.h"
#include "commands.h"
#include "flags.h"
#include "mgb/client.h"

extern char **environ;

namespace mgb::cli {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
// How often the child's GPU memory is read while it runs.
constexpr timespec kUsagePeriod = {0, 500'000'000};

// The child's environment: ours, with the CUDA variables that pin it to the granted GPU.
std::vector<std::string> ChildEnvironment(const Placement &p, const SessionDetails &session,
                                          uint64_t granted_bytes) {
  std::vector<std::pair<std::string, std::string>> set = {
      {"CUDA_VISIBLE_DEVICES", p.gpu_uuid.empty() ? std::to_string(p.gpu_index) : p.gpu_uuid}};
  if (!session.mps_pipe_directory.empty()) {
    set.emplace_back("CUDA_MPS_PIPE_DIRECTORY", session.mps_pipe_directory);
    // A per-client cap the MPS server enforces: the program cannot take more than its grant plus
    // its CUDA context, which mgbd charges separately (the cap counts both: measured on H200, a
    // cap of exactly the grant refused a 100 GiB program its 100 GiB).
    const uint64_t capped = granted_bytes + session.context_reserve_bytes;
    const uint64_t mib = (capped + (1 << 20) - 1) >> 20;
    set.emplace_back("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=" + std::to_string(mib) + "M");
  }
  std::vector<std::string> env;
  for (char **e = environ; *e != nullptr; ++e) {
    bool replaced = false;
    for (const auto &[name, value] : set) replaced = replaced || std::strncmp(*e, (name + "=").c_str(), name.size() + 1) == 0;
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

// Starts the program with the default signal mask and waits for it, forwarding our signals and
// calling on_tick(child) every kUsagePeriod without one. Returns its exit status (128 + signal if
// killed), or 127 if it could not start.
int SpawnAndWait(const char *self, std::vector<std::string> args, std::vector<std::string> env,
                 const sigset_t &waited, const sigset_t &original_mask,
                 const std::function<void(pid_t)> &on_tick) {
  std::vector<char *> argv = Pointers(args), envp = Pointers(env);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigmask(&attr, &original_mask);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t child = 0;
  const int rc = posix_spawnp(&child, argv[0], nullptr, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
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
  uint64_t memory = 0;
  int64_t warps = 1;
  std::string socket = SocketFromEnvironment();
  FlagParser flags(argv[0],
                   "mgb run --mem SIZE [--warps N] [--socket PATH] -- PROGRAM [ARGS...]\n\n"
                   "Runs PROGRAM as one GPU task: waits until mgbd grants SIZE bytes on a GPU, shows\n"
                   "the program only that GPU (CUDA_VISIBLE_DEVICES; under MPS also\n"
                   "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT), releases it when the program exits and\n"
                   "returns the program's exit status (127: it could not start).");
  flags.Size("mem", &memory, "device memory the program needs (512M, 10G, 100GiB, bytes)");
  flags.Int("warps", &warps, "warps the program keeps busy, for the mgb policy (default 1)");
  flags.String("socket", &socket, "mgbd's socket (default: $MGB_SOCKET or /tmp/mgbd.sock)");
  std::vector<std::string> program;
  if (std::optional<int> exit_code = flags.Parse(argc, argv, &program)) return *exit_code;
  if (memory == 0) return flags.Fail("--mem SIZE is required and must be > 0");
  if (warps < 1 || warps > (int64_t{1} << 31)) return flags.Fail("--warps must be in 1..2^31");
  if (program.empty()) return flags.Fail("no PROGRAM after --");

  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(socket, getpid(), program[0]);
  if (!client.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[0], std::string(client.status().message()).c_str());
    return 1;
  }
  LaunchShape shape;
  shape.grid.x = static_cast<uint32_t>(warps);
  shape.block.x = 32;  // one warp per block: warps = N
  absl::StatusOr<Placement> placement =
      (*client)->TaskBegin(memory, shape, "mgb run " + program[0]);
  if (!placement.ok()) {
    std::fprintf(stderr, "%s: mgbd refused the task: %s\n", argv[0],
                 std::string(placement.status().message()).c_str());
    return 1;
  }
  // While waiting above, Ctrl-C simply ends us (and so the session). From here on our signals go
  // to sigwaitinfo and on to the program.
  sigset_t waited, original_mask;
  sigemptyset(&waited);
  for (int sig : kForwarded) sigaddset(&waited, sig);
  sigaddset(&waited, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &waited, &original_mask);
  // On NVML GPUs mgbd counts what programs allocated twice (in NVML's used memory and as our
  // unallocated grant) unless we say how much of the grant the program holds.
  const std::unique_ptr<ChildGpuMemory> meter = ChildGpuMemory::Open(placement->gpu_uuid);
  uint64_t reported = 0;
  auto report_usage = [&](pid_t child) {
    if (!meter) return;
    const std::optional<uint64_t> bytes = meter->Bytes(child);
    if (!bytes || *bytes == reported) return;
    if (absl::Status s = (*client)->TaskUsage(placement->task_id, *bytes); !s.ok()) {
      std::fprintf(stderr, "%s: reporting GPU memory: %s\n", argv[0], std::string(s.message()).c_str());
      return;
    }
    reported = *bytes;
  };
  const int status = SpawnAndWait(argv[0], program,
                                   ChildEnvironment(*placement, (*client)->session(), memory),
                                   waited, original_mask, report_usage);
  if (absl::Status end = (*client)->TaskEnd(placement->task_id); !end.ok()) {
    std::fprintf(stderr, "%s: releasing the GPU: %s\n", argv[0], std::string(end.message()).c_str());
  }
  return status;
}

}  // namespace mgb::cli
