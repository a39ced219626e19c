// mgbd under systemd, without systemd: the test plays its part, passing a listening socket as fd 3
// with LISTEN_PID/LISTEN_FDS (socket activation) and waiting for READY=1 on NOTIFY_SOCKET.
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "mgb.pb.h"
#include "mgb/client.h"
#include "test_support.h"

namespace mgb::test {
namespace {

int UnixSocket(int type, const std::string &path) {
  const int fd = socket(AF_UNIX, type, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)) == 0);
  if (type == SOCK_STREAM) REQUIRE(listen(fd, 16) == 0);
  return fd;
}

}  // namespace

TEST_CASE(
    "socket activation: mgbd serves the socket systemd passed, says READY=1, and leaves the "
    "socket file to systemd",
    "[systemd]") {
  TempDir dir;
  const std::string socket_path = dir.File("activated.sock");
  const int listener = UnixSocket(SOCK_STREAM, socket_path);
  const int notify = UnixSocket(SOCK_DGRAM, dir.File("notify"));
  const std::string gpus = WriteGpuConfig(dir, 1, 16 * kGiB);
  const pid_t child = fork();
  if (child == 0) {
    dup2(listener, 3);
    setenv("LISTEN_FDS", "1", 1);
    setenv("LISTEN_PID", std::to_string(getpid()).c_str(), 1);
    setenv("NOTIFY_SOCKET", dir.File("notify").c_str(), 1);
    execl(MGB_MGBD, MGB_MGBD, "--socket", socket_path.c_str(), "--gpus", gpus.c_str(),
          "--profile-store", "none", static_cast<char *>(nullptr));
    _exit(127);
  }
  close(listener);
  timeval timeout{10, 0};
  setsockopt(notify, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  char message[64] = {};
  const ssize_t got = recv(notify, message, sizeof(message) - 1, 0);
  CHECK(got > 0);
  CHECK(std::string(message) == "READY=1");
  auto status = Client::StatusAt(socket_path);
  REQUIRE(status.ok());
  CHECK(status->gpus_size() == 1);
  kill(child, SIGTERM);
  int wstatus = 0;
  waitpid(child, &wstatus, 0);
  CHECK(WIFEXITED(wstatus));
  struct stat info;
  CHECK(stat(socket_path.c_str(), &info) == 0);  // systemd's file, still there
  close(notify);
}

TEST_CASE("socket activation with two sockets is refused, naming the unit's mistake", "[systemd]") {
  TempDir dir;
  const int listener = UnixSocket(SOCK_STREAM, dir.File("a.sock"));
  const std::string gpus = WriteGpuConfig(dir, 1, 16 * kGiB);
  const std::string err = dir.File("err");
  const pid_t child = fork();
  if (child == 0) {
    dup2(listener, 3);
    dup2(listener, 4);
    setenv("LISTEN_FDS", "2", 1);
    setenv("LISTEN_PID", std::to_string(getpid()).c_str(), 1);
    freopen(err.c_str(), "w", stderr);
    execl(MGB_MGBD, MGB_MGBD, "--socket", dir.File("b.sock").c_str(), "--gpus", gpus.c_str(),
          static_cast<char *>(nullptr));
    _exit(127);
  }
  int wstatus = 0;
  waitpid(child, &wstatus, 0);
  CHECK(WIFEXITED(wstatus));
  CHECK(WEXITSTATUS(wstatus) == 1);
  CHECK_THAT(ReadFile(err), Catch::Contains("passed 2 sockets"));
  close(listener);
}

}  // namespace mgb::test
