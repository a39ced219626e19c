#include "test_support.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char **environ;

namespace mgb::test {

TempDir::TempDir() {
  char pattern[] = "/tmp/mgb-test-XXXXXX";
  if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string WriteGpuConfig(const TempDir &dir, int count, uint64_t bytes) {
  const std::string path = dir.File("gpus.json");
  std::ofstream out(path);
  out << "{\"gpus\": [";
  for (int i = 0; i < count; ++i) {
    out << (i ? ", " : "") << "{\"name\": \"g" << i << "\", \"memory_bytes\": " << bytes
        << ", \"sms\": 132}";
  }
  out << "]}\n";
  return path;
}

server::DaemonOptions ConfigGpuOptions(const TempDir &dir, int count, uint64_t bytes) {
  server::DaemonOptions options;
  options.socket_path = dir.File("mgbd.sock");
  options.gpus_file = WriteGpuConfig(dir, count, bytes);
  options.context_reserve_bytes = 0;
  return options;
}

std::unique_ptr<TestDaemon> StartDaemon(int gpus, uint64_t bytes, const std::string &policy,
                                        uint64_t context_reserve,
                                        const server::ListenerLimits &limits) {
  return StartDaemonWith(gpus, bytes, [&](server::DaemonOptions &options) {
    options.policy = policy;
    options.context_reserve_bytes = context_reserve;
    options.limits = limits;
  });
}

std::unique_ptr<TestDaemon> StartDaemonWith(
    int gpus, uint64_t bytes, const std::function<void(server::DaemonOptions &)> &adjust) {
  auto t = std::make_unique<TestDaemon>();
  server::DaemonOptions options = ConfigGpuOptions(t->dir, gpus, bytes);
  adjust(options);
  absl::StatusOr<std::unique_ptr<server::Daemon>> d = server::Daemon::Start(options);
  if (!d.ok()) throw std::runtime_error(std::string(d.status().message()));
  t->daemon = std::move(*d);
  t->socket = options.socket_path;
  return t;
}

namespace {

std::vector<char *> Pointers(std::vector<std::string> &strings) {
  std::vector<char *> out;
  for (std::string &s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::string ReadAll(int fd) {
  std::string text;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  return text;
}

}  // namespace

ProcessResult RunProcess(const std::vector<std::string> &argv_in,
                         const std::vector<std::string> &extra_env) {
  std::vector<std::string> args = argv_in;
  std::vector<std::string> env;
  for (char **e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  pid_t pid = 0;
  std::vector<char *> argv = Pointers(args), envp = Pointers(env);
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  ProcessResult result;
  if (rc != 0) throw std::runtime_error("cannot start " + args[0]);
  std::thread err_reader([&] { result.err = ReadAll(err[0]); });
  result.out = ReadAll(out[0]);
  err_reader.join();
  close(out[0]);
  close(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

int StartProcess(const std::vector<std::string> &argv_in) {
  std::vector<std::string> args = argv_in;
  std::vector<char *> argv = Pointers(args);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + args[0]);
  return pid;
}

std::chrono::milliseconds WaitFor(const std::function<bool()> &condition,
                                  std::chrono::milliseconds limit) {
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    if (condition()) return spent;
    if (spent >= limit) return limit;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool ReachableByOthers(const std::string &path) {
  for (std::filesystem::path dir = std::filesystem::absolute(path).parent_path();;
       dir = dir.parent_path()) {
    struct stat st {};
    if (stat(dir.c_str(), &st) != 0 || (st.st_mode & S_IXOTH) == 0) return false;
    if (dir == dir.root_path()) return true;
  }
}

std::string ReadFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace mgb::test
