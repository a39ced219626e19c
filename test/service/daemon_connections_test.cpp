// mgbd's connections under abuse: a flood past the descriptor limit, connections that never
// speak, a forged pid, an unsafe socket directory. Real mgbd (process or in-process), real socket.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <thread>

#include "mgb/client.h"
#include "test_support.h"

namespace mgb::test {
namespace {

// A raw connection to a Unix socket; -1 when connect fails.
int ConnectRaw(const std::string &path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  if (connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// The HTTP/2 client preface and an empty SETTINGS frame: what an idle gRPC channel sends.
void SendPreface(int fd) {
  static const char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0";
  (void)!send(fd, kPreface, sizeof kPreface - 1, MSG_NOSIGNAL);
}

// True when the server closed `fd` (EOF after whatever it sent) within `limit`.
bool ServerClosed(int fd, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  timeval tv{0, 100 * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buffer[256];
  while (std::chrono::steady_clock::now() < end) {
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n == 0) return true;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return true;
  }
  return false;
}

// mgbd as a process whose descriptor limit is `descriptors` (soft and hard: it cannot raise it).
int StartMgbdWithDescriptorLimit(const std::vector<std::string> &args, rlim_t descriptors) {
  const pid_t pid = fork();
  if (pid == 0) {
    rlimit limit{descriptors, descriptors};
    setrlimit(RLIMIT_NOFILE, &limit);
    std::vector<char *> argv;
    for (const std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    const int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

}  // namespace

TEST_CASE("a flood of connections past mgbd's descriptor limit leaves it answering", "[daemon]") {
  // The flood needs more descriptors than mgbd's 1024 in this process.
  rlimit own{};
  getrlimit(RLIMIT_NOFILE, &own);
  if (own.rlim_max < 1400) {
    WARN("skipped: this process may open only " << own.rlim_max << " descriptors");
    return;
  }
  const rlimit raised{own.rlim_max, own.rlim_max};
  setrlimit(RLIMIT_NOFILE, &raised);

  TempDir dir;
  const std::string socket = dir.File("mgbd.sock");
  const int pid = StartMgbdWithDescriptorLimit(
      {MGB_MGBD, "--socket", socket, "--gpus", WriteGpuConfig(dir, 2, 16 * kGiB)}, 1024);
  REQUIRE(WaitFor([&] { return Client::StatusAt(socket, std::chrono::milliseconds(100)).ok(); },
                  std::chrono::seconds(10)) < std::chrono::seconds(10));

  std::vector<int> flood;
  for (int i = 0; i < 1100; ++i) {
    const int fd = ConnectRaw(socket);
    if (fd < 0) break;
    SendPreface(fd);
    flood.push_back(fd);
  }
  CHECK(flood.size() == 1100);  // the backlog takes them; the excess is closed by mgbd
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(kill(pid, 0) == 0);  // alive
  for (int fd : flood) close(fd);

  // gRPC 1.51's own listener stopped accepting for good here ("Failed accept4").
  const auto answered = WaitFor(
      [&] {
        return RunProcess({MGB_CLI, "status", "--socket", socket}).exit_code == 0;
      },
      std::chrono::seconds(5));
  CHECK(answered < std::chrono::seconds(1));
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("connections that never speak are closed after the handshake timeout", "[daemon]") {
  server::ListenerLimits limits;
  limits.handshake_timeout = std::chrono::milliseconds(300);
  auto d = StartDaemon(1, 16 * kGiB, "mgb", 0, limits);
  std::vector<int> silent;
  for (int i = 0; i < 50; ++i) silent.push_back(ConnectRaw(d->socket));
  int closed = 0;
  for (int fd : silent) closed += ServerClosed(fd, std::chrono::seconds(3)) ? 1 : 0;
  CHECK(closed == 50);
  for (int fd : silent) close(fd);
  CHECK(Client::StatusAt(d->socket).ok());  // a client that speaks is served meanwhile
}

TEST_CASE("connections past the per-user cap are refused, and served again once others close",
          "[daemon]") {
  server::ListenerLimits limits;
  limits.max_connections_per_user = 20;
  auto d = StartDaemon(1, 16 * kGiB, "mgb", 0, limits);
  std::vector<int> held;
  for (int i = 0; i < 20; ++i) {
    held.push_back(ConnectRaw(d->socket));
    SendPreface(held.back());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_FALSE(Client::StatusAt(d->socket, std::chrono::milliseconds(500)).ok());
  for (int fd : held) close(fd);
  CHECK(WaitFor([&] { return Client::StatusAt(d->socket, std::chrono::milliseconds(200)).ok(); },
                std::chrono::seconds(3)) < std::chrono::seconds(3));
}

TEST_CASE("a session's pid is its connection's, not the one its client claims", "[daemon]") {
  auto d = StartDaemon(1, 16 * kGiB);
  auto liar = Client::Connect(d->socket, /*pid=*/1, "claims-to-be-init");
  REQUIRE(liar.ok());
  REQUIRE((*liar)->TaskBegin(kGiB, LaunchShape{}, "k").ok());
  auto status = Client::StatusAt(d->socket);
  REQUIRE(status.ok());
  REQUIRE(status->tasks_size() == 1);
  CHECK(status->tasks(0).pid() == getpid());
}

TEST_CASE("mgbd refuses a socket directory anyone may write without the sticky bit", "[daemon]") {
  TempDir dir;
  const std::string open_dir = dir.File("open");
  REQUIRE(mkdir(open_dir.c_str(), 0777) == 0);
  REQUIRE(chmod(open_dir.c_str(), 0777) == 0);  // past the umask
  server::DaemonOptions options;
  options.socket_path = open_dir + "/mgbd.sock";
  options.gpus_file = WriteGpuConfig(dir, 1, 16 * kGiB);
  auto refused = server::Daemon::Start(options);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("no sticky bit"));
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains(open_dir));

  REQUIRE(chmod(open_dir.c_str(), 01777) == 0);  // like /tmp: allowed
  auto started = server::Daemon::Start(options);
  REQUIRE(started.ok());
  struct stat st {};
  REQUIRE(stat(options.socket_path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0660);  // born so: never chmodded by path
}

TEST_CASE("a socket this user may not use is reported as such, not as mgbd missing", "[daemon]") {
  if (geteuid() == 0) {
    WARN("skipped: root may connect to any socket");  // CI runs as root: checked by hand
    return;
  }
  auto d = StartDaemon(1, 16 * kGiB);
  REQUIRE(chmod(d->socket.c_str(), 0) == 0);
  auto status = Client::StatusAt(d->socket, std::chrono::milliseconds(300));
  REQUIRE_FALSE(status.ok());
  CHECK(status.status().code() == absl::StatusCode::kPermissionDenied);
  CHECK_THAT(std::string(status.status().message()), Catch::Contains("may not connect"));
}

}  // namespace mgb::test
