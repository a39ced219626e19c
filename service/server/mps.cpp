#include "mps.h"

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"

extern char **environ;

namespace mgb::server {
namespace {

// Runs nvidia-cuda-mps-control with the MPS directories in its environment; returns its exit
// status, feeding `input` (if any) to its stdin.
absl::StatusOr<int> RunControl(const MpsDirectories &dirs, const std::vector<std::string> &args,
                               const std::string &input) {
  std::vector<std::string> env_strings = {"CUDA_MPS_PIPE_DIRECTORY=" + dirs.pipe,
                                          "CUDA_MPS_LOG_DIRECTORY=" + dirs.log};
  for (char **e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "CUDA_MPS_", 9) != 0) env_strings.emplace_back(*e);
  }
  std::vector<char *> env;
  for (std::string &s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  std::vector<std::string> argv_strings = {"nvidia-cuda-mps-control"};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (std::string &s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) return absl::InternalError("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  pid_t pid = 0;
  const int rc =
      posix_spawnp(&pid, "nvidia-cuda-mps-control", &actions, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);
  if (rc != 0) {
    close(in[1]);
    return absl::FailedPreconditionError(
        absl::StrCat("--mps: cannot run nvidia-cuda-mps-control (", std::strerror(rc),
                     "); is the NVIDIA driver's MPS installed and on PATH?"));
  }
  if (!input.empty()) (void)!write(in[1], input.data(), input.size());
  close(in[1]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

absl::StatusOr<MpsDirectories> EnsureMpsControlDaemon(const std::string &base) {
  MpsDirectories dirs{base + "/pipe", base + "/log"};
  std::error_code ec;
  std::filesystem::create_directories(dirs.pipe, ec);
  if (ec)
    return absl::FailedPreconditionError(absl::StrCat("--mps-dir ", dirs.pipe, ": ", ec.message()));
  std::filesystem::create_directories(dirs.log, ec);
  if (ec)
    return absl::FailedPreconditionError(absl::StrCat("--mps-dir ", dirs.log, ": ", ec.message()));
  // A control daemon already there answers this query with status 0.
  if (std::filesystem::exists(dirs.pipe + "/control")) {
    absl::StatusOr<int> query = RunControl(dirs, {}, "get_server_list\n");
    if (!query.ok()) return query.status();
    if (*query == 0) return dirs;
  }
  absl::StatusOr<int> start = RunControl(dirs, {"-d"}, "");
  if (!start.ok()) return start.status();
  if (*start != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--mps: nvidia-cuda-mps-control -d exited with ", *start, "; see ", dirs.log,
                     "/control.log"));
  }
  return dirs;
}

}  // namespace mgb::server
