#include "systemd.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace mgb::server {
namespace {

constexpr int kFirstPassedFd = 3;  // SD_LISTEN_FDS_START

}  // namespace

std::optional<int> InheritedListenSocket(std::string *error) {
  const char *pid = std::getenv("LISTEN_PID");
  const char *fds = std::getenv("LISTEN_FDS");
  if (pid == nullptr || fds == nullptr || std::strtol(pid, nullptr, 10) != getpid()) {
    return std::nullopt;
  }
  // Not for the programs mgbd starts (the MPS control daemon).
  unsetenv("LISTEN_PID");
  unsetenv("LISTEN_FDS");
  unsetenv("LISTEN_FDNAMES");
  if (std::strcmp(fds, "1") != 0) {
    *error =
        std::string("systemd passed ") + fds + " sockets; mgbd.socket must have one ListenStream";
    return std::nullopt;
  }
  int listening = 0, domain = 0;
  socklen_t size = sizeof(listening);
  if (getsockopt(kFirstPassedFd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) != 0 || !listening) {
    *error = "the socket systemd passed is not listening";
    return std::nullopt;
  }
  size = sizeof(domain);
  if (getsockopt(kFirstPassedFd, SOL_SOCKET, SO_DOMAIN, &domain, &size) != 0 || domain != AF_UNIX) {
    *error = "the socket systemd passed is not a Unix socket (ListenStream must be a path)";
    return std::nullopt;
  }
  fcntl(kFirstPassedFd, F_SETFD, FD_CLOEXEC);
  return kFirstPassedFd;
}

void NotifyReady() {
  const char *path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || *path == '\0') return;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const size_t length = std::strlen(path);
  if (length >= sizeof(address.sun_path)) return;
  std::memcpy(address.sun_path, path, length);
  if (path[0] == '@') address.sun_path[0] = '\0';  // an abstract socket
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  const char message[] = "READY=1";
  sendto(fd, message, sizeof(message) - 1, MSG_NOSIGNAL, reinterpret_cast<sockaddr *>(&address),
         static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length));
  close(fd);
}

}  // namespace mgb::server
