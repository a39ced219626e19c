// mgb slurm-conf: a node's Slurm configuration for mgb, from mgbd's inventory; and
// mgb slurm-hook prolog|epilog|task-prolog: what Slurm runs at each job's start and end on the
// node (docs/slurm.md).
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "commands.h"
#include "flags.h"
#include "job_grant.h"
#include "mgb.pb.h"
#include "mgb/client.h"
#include "mgb/core/byte_size.h"
#include "mgb/core/scheduler.h"
#include "program_path.h"
#include "slurm_config.h"

extern char **environ;

namespace mgb::cli {
namespace {

std::string ShortHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  std::string host = name;
  return host.substr(0, host.find('.'));
}

std::string SelfPath() {
  std::vector<char> buffer(4096);
  const ssize_t n = readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
  return n > 0 ? std::string(buffer.data(), static_cast<size_t>(n)) : "mgb";
}

// Runs argv (no shell) and returns its standard output; an error names the command and its exit.
absl::StatusOr<std::string> Capture(const std::vector<std::string> &argv) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0)
    return absl::InternalError(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<char *> args;
  for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawned != 0) {
    close(pipe_fds[0]);
    return absl::UnavailableError(argv[0] + ": cannot run: " + std::strerror(spawned));
  }
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::UnavailableError(absl::StrCat(absl::StrJoin(argv, " "), ": exited with status ",
                                               WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
  return out;
}

std::optional<uint64_t> JobFromEnvironment() {
  const char *text = std::getenv("SLURM_JOB_ID");
  uint64_t job = 0;
  if (text == nullptr || !absl::SimpleAtoi(text, &job) || job == 0) return std::nullopt;
  return job;
}

std::string NodeFromEnvironment() {
  const char *node = std::getenv("SLURMD_NODENAME");
  return node != nullptr && *node != '\0' ? node : ShortHostName();
}

// Slurm drains a node whose Prolog fails: mgbd being away (a restart) is no reason to, so the
// hooks try for about 5 s (each try connects within kTryTimeout), then say why on stderr
// (slurmd's log) and exit 0.
constexpr std::chrono::milliseconds kTryTimeout{1000};

template <class Call>
absl::Status Retrying(Call &&call) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (true) {
    absl::Status status = call();
    if (status.code() != absl::StatusCode::kUnavailable ||
        std::chrono::steady_clock::now() >= give_up) {
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

int Prolog(const std::string &socket, const std::string &scontrol) {
  const std::optional<uint64_t> job = JobFromEnvironment();
  if (!job) {
    std::fprintf(stderr,
                 "mgb slurm-hook prolog: SLURM_JOB_ID is not a job id: run it as Slurm's Prolog\n");
    return 2;
  }
  absl::StatusOr<std::string> record =
      Capture({scontrol, "show", "job", "-d", "-o", std::to_string(*job)});
  absl::StatusOr<uint64_t> bytes =
      record.ok() ? slurm::GpuMemoryPerNode(*record) : absl::StatusOr<uint64_t>(record.status());
  if (!bytes.ok()) {
    std::fprintf(stderr, "mgb slurm-hook prolog: job %llu: %s; its tasks get no GPU memory here\n",
                 static_cast<unsigned long long>(*job),
                 std::string(bytes.status().message()).c_str());
    return 0;
  }
  absl::Status told =
      Retrying([&] { return Client::JobBeginAt(socket, *job, *bytes, kTryTimeout); });
  if (!told.ok()) {
    std::fprintf(stderr,
                 "mgb slurm-hook prolog: job %llu: telling mgbd at %s its grant of %s: %s\n",
                 static_cast<unsigned long long>(*job), socket.c_str(),
                 core::FormatBytes(*bytes).c_str(), std::string(told.message()).c_str());
  }
  return 0;
}

int Epilog(const std::string &socket) {
  const std::optional<uint64_t> job = JobFromEnvironment();
  if (!job) {
    std::fprintf(stderr,
                 "mgb slurm-hook epilog: SLURM_JOB_ID is not a job id: run it as Slurm's Epilog\n");
    return 2;
  }
  absl::StatusOr<uint32_t> ended;
  absl::Status told = Retrying([&] {
    ended = Client::JobEndAt(socket, *job, kTryTimeout);
    return ended.status();
  });
  if (!told.ok()) {
    std::fprintf(stderr, "mgb slurm-hook epilog: job %llu: telling mgbd at %s: %s\n",
                 static_cast<unsigned long long>(*job), socket.c_str(),
                 std::string(told.message()).c_str());
  } else if (*ended > 0) {
    std::fprintf(stderr, "mgb slurm-hook epilog: job %llu: %u session(s) of its processes ended\n",
                 static_cast<unsigned long long>(*job), *ended);
  }
  return 0;
}

}  // namespace

int RunSlurmHookCommand(int argc, char **argv) {
  std::string socket_template = SocketFromEnvironment();
  std::string scontrol = batch::ResolveProgram("scontrol");
  FlagParser flags(
      argv[0],
      "mgb slurm-hook prolog|epilog|task-prolog [--socket TEMPLATE] [--scontrol PATH]\n\n"
      "What Slurm runs on a node (scripts from `mgb slurm-conf --hooks DIR`):\n"
      "  prolog       tells mgbd the job's grant: --gres=gpumem per node, from scontrol\n"
      "  epilog       tells mgbd the job ended: what its processes held is released\n"
      "  task-prolog  prints `export MGB_SOCKET=...` so the job's programs find mgbd\n"
      "Job and node come from Slurm's SLURM_JOB_ID and SLURMD_NODENAME. mgbd being\n"
      "unreachable is reported on stderr (slurmd's log), never a failed prolog.");
  flags.String("socket", &socket_template,
               "mgbd's socket; %n is the node's name (default: $MGB_SOCKET, /run/mgbd/mgbd.sock or "
               "/tmp/mgbd.sock)");
  flags.String("scontrol", &scontrol, "the scontrol command (default: from PATH)");
  std::vector<std::string> rest;
  if (std::optional<int> exit_code = flags.Parse(argc, argv, &rest)) return *exit_code;
  if (rest.size() != 1) return flags.Fail("expected one hook: prolog, epilog or task-prolog");
  const std::string socket = slurm::ExpandSocketTemplate(socket_template, NodeFromEnvironment());
  if (rest[0] == "prolog") return Prolog(socket, scontrol);
  if (rest[0] == "epilog") return Epilog(socket);
  if (rest[0] == "task-prolog") {
    std::printf("export MGB_SOCKET=%s\n", socket.c_str());
    return 0;
  }
  return flags.Fail("unknown hook '" + rest[0] + "' (prolog, epilog or task-prolog)");
}

int RunSlurmConfCommand(int argc, char **argv) {
  std::string socket = SocketFromEnvironment();
  std::string node = ShortHostName();
  uint64_t context_reserve = core::kDefaultContextReserve;
  std::string hooks_dir, socket_template, scontrol = batch::ResolveProgram("scontrol");
  bool gres_only = false;
  FlagParser flags(
      argv[0],
      "mgb slurm-conf [--socket PATH] [--node NAME] [--context-reserve SIZE]\n"
      "               [--hooks DIR [--hook-socket TEMPLATE] [--scontrol PATH]] [--gres]\n\n"
      "Prints this node's Slurm configuration for mgb, from mgbd's GPUs: GPU memory as\n"
      "a count GRES (gpumem) for slurm.conf and gres.conf. With --hooks, also writes the\n"
      "Prolog, Epilog and TaskProlog scripts into DIR and prints their slurm.conf lines.");
  flags.String("socket", &socket,
               "mgbd's socket (default: $MGB_SOCKET, /run/mgbd/mgbd.sock or /tmp/mgbd.sock)");
  flags.String("node", &node, "the node's Slurm name (default: the short host name)");
  flags.Size(
      "context-reserve", &context_reserve,
      "per GPU, memory left out of the grant for a process's CUDA context (default 528M, as mgbd)");
  flags.String("hooks", &hooks_dir,
               "write mgb-prolog, mgb-epilog and mgb-task-prolog into this directory");
  flags.String("hook-socket", &socket_template,
               "the socket the hooks use; %n is the node's name (default: --socket)");
  flags.String("scontrol", &scontrol, "the scontrol the prolog runs (default: from PATH)");
  flags.Bool("gres", &gres_only, "print only the node's GRES value (e.g. gpumem:286464M)");
  if (std::optional<int> exit_code = flags.Parse(argc, argv, nullptr)) return *exit_code;
  absl::StatusOr<v1::StatusReply> status = Client::StatusAt(socket);
  if (!status.ok()) return flags.Fail(std::string(status.status().message()));
  std::vector<slurm::NodeGpu> gpus;
  for (const v1::GpuStatus &g : status->gpus()) gpus.push_back({g.name(), g.memory_total_bytes()});
  if (gres_only) {
    std::printf("%s\n", slurm::NodeGres(gpus, context_reserve).c_str());
    return 0;
  }
  std::optional<slurm::HookSettings> hooks;
  if (!hooks_dir.empty()) {
    if (hooks_dir[0] != '/')
      return flags.Fail("--hooks: must be an absolute path (Slurm runs them from anywhere)");
    if (scontrol.empty() || scontrol[0] != '/') {
      return flags.Fail(
          "--scontrol: no scontrol found on PATH; name it with --scontrol /path/to/scontrol");
    }
    hooks = slurm::HookSettings{hooks_dir, SelfPath(),
                                socket_template.empty() ? socket : socket_template, scontrol};
    mkdir(hooks_dir.c_str(), 0755);
    for (const slurm::HookScript &script : slurm::HookScripts(*hooks)) {
      std::ofstream out(script.path, std::ios::trunc);
      out << script.text;
      out.close();
      if (!out || chmod(script.path.c_str(), 0755) != 0) {
        return flags.Fail("--hooks: cannot write " + script.path + ": " + std::strerror(errno));
      }
    }
  }
  std::printf("%s",
              slurm::SlurmConfText(node, gpus, context_reserve, hooks ? &*hooks : nullptr).c_str());
  return 0;
}

}  // namespace mgb::cli
