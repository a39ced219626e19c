#include "connection_listener.h"

#include <fcntl.h>
#include <grpcpp/server_posix.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lane_wire.h"

namespace mgb::server {
namespace {

// Descriptors kept free for everything else mgbd opens (gRPC's own, NVML, MPS, log files).
constexpr size_t kDescriptorReserve = 256;
// After an accept error (EMFILE, ENOMEM...): wait this long, then accept again. Never give up.
constexpr std::chrono::milliseconds kAcceptBackoff{100};

size_t DescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return SIZE_MAX;
  return static_cast<size_t>(limit.rlim_cur);
}

// The inode of the socket open as descriptor `fd` in this process, 0 if it is not one.
uint64_t SocketInodeOfDescriptor(int fd) {
  char link[64];
  const std::string proc = absl::StrCat("/proc/self/fd/", fd);
  const ssize_t n = readlink(proc.c_str(), link, sizeof link - 1);
  if (n <= 0) return 0;
  link[n] = '\0';
  uint64_t inode = 0;
  if (std::sscanf(link, "socket:[%lu]", &inode) != 1) return 0;
  return inode;
}

bool AcceptErrorIsTransient(int error) {
  return error == EAGAIN || error == EWOULDBLOCK || error == EINTR || error == ECONNABORTED ||
         error == EPROTO;
}

}  // namespace

ConnectionListener::ConnectionListener(int listen_fd, ListenerLimits limits)
    : listen_fd_(listen_fd), limits_(limits) {
  const size_t descriptors = DescriptorLimit();
  const size_t usable = descriptors > 2 * kDescriptorReserve ? descriptors - kDescriptorReserve
                                                             : std::max<size_t>(descriptors / 2, 8);
  limits_.max_connections = std::min(limits_.max_connections, usable);
  limits_.max_connections_per_user =
      std::min(limits_.max_connections_per_user, limits_.max_connections);
  if (pipe2(wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) wake_pipe_[0] = wake_pipe_[1] = -1;
}

ConnectionListener::~ConnectionListener() {
  Stop();
  for (int fd : wake_pipe_) {
    if (fd >= 0) close(fd);
  }
}

void ConnectionListener::Start(grpc::Server *server, std::function<void(int fd)> lane) {
  server_ = server;
  lane_ = std::move(lane);
  thread_ = std::thread([this] { AcceptLoop(); });
}

void ConnectionListener::Stop() {
  if (stopping_.exchange(true)) return;
  if (wake_pipe_[1] >= 0) (void)!write(wake_pipe_[1], "x", 1);
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) close(listen_fd_);
  listen_fd_ = -1;
}

std::optional<PeerCredentials> ConnectionListener::Peer(const std::string &grpc_peer) const {
  int fd = -1;
  if (grpc_peer.rfind("fd:", 0) != 0 || !absl::SimpleAtoi(grpc_peer.substr(3), &fd)) {
    return std::nullopt;
  }
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = connections_.find(fd);
  if (it == connections_.end()) return std::nullopt;
  return it->second.peer;
}

void ConnectionListener::AcceptLoop() {
  std::vector<Pending> pending;
  std::chrono::steady_clock::time_point accept_again{};
  while (!stopping_.load()) {
    const auto now = std::chrono::steady_clock::now();
    std::vector<pollfd> fds;
    fds.push_back({wake_pipe_[0], POLLIN, 0});
    const bool accepting = now >= accept_again;
    fds.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});
    int timeout_ms = -1;
    if (!accepting) {
      timeout_ms = static_cast<int>(
          std::chrono::ceil<std::chrono::milliseconds>(accept_again - now).count());
    }
    for (const Pending &p : pending) {
      fds.push_back({p.fd, POLLIN, 0});
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(p.since + limits_.handshake_timeout - now);
      const int left_ms = static_cast<int>(std::max<int64_t>(left.count(), 0));
      timeout_ms = timeout_ms < 0 ? left_ms : std::min(timeout_ms, left_ms);
    }
    if (poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) {
      std::this_thread::sleep_for(kAcceptBackoff);
      continue;
    }
    if (stopping_.load()) break;

    // Pending connections: handed over once they speak (or hang up), closed once they time out.
    const auto after = std::chrono::steady_clock::now();
    std::vector<Pending> still_pending;
    for (size_t i = 0; i < pending.size(); ++i) {
      const Pending &p = pending[i];
      const short events = fds[i + 2].revents;
      if ((events & POLLIN) != 0) {
        HandOver(p);
      } else if ((events & (POLLHUP | POLLERR | POLLNVAL)) != 0 ||
                 after >= p.since + limits_.handshake_timeout) {
        close(p.fd);
        std::lock_guard<std::mutex> lock(mu_);
        connections_.erase(p.fd);
      } else {
        still_pending.push_back(p);
      }
    }
    pending = std::move(still_pending);

    if (accepting && (fds[1].revents & POLLIN) != 0) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        const int error = errno;
        if (!AcceptErrorIsTransient(error)) {
          // EMFILE and friends: the connection stays in the backlog; try again shortly.
          std::fprintf(stderr, "mgbd: accepting a connection failed (%s); retrying in %lld ms\n",
                       std::strerror(error), static_cast<long long>(kAcceptBackoff.count()));
          accept_again = after + kAcceptBackoff;
        }
        continue;
      }
      ucred cred{};
      socklen_t size = sizeof cred;
      Pending p{fd, {}, after};
      if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &size) == 0) {
        p.connection.peer = PeerCredentials{cred.pid, cred.uid, cred.gid};
      }
      p.connection.inode = SocketInodeOfDescriptor(fd);
      std::lock_guard<std::mutex> lock(mu_);
      if (!Admit(p.connection.peer)) {
        close(fd);
        continue;
      }
      connections_[fd] = p.connection;
      pending.push_back(p);
    }
  }
  for (const Pending &p : pending) close(p.fd);
}

bool ConnectionListener::Admit(const PeerCredentials &peer) {
  const auto count_user = [&] {
    return static_cast<size_t>(
        std::count_if(connections_.begin(), connections_.end(),
                      [&](const auto &c) { return c.second.peer.uid == peer.uid; }));
  };
  if (connections_.size() >= limits_.max_connections ||
      count_user() >= limits_.max_connections_per_user) {
    PruneClosed();
  }
  const char *which = nullptr;
  size_t limit = 0;
  if (connections_.size() >= limits_.max_connections) {
    which = "connections in all";
    limit = limits_.max_connections;
  } else if (count_user() >= limits_.max_connections_per_user) {
    which = "connections of this user";
    limit = limits_.max_connections_per_user;
  }
  if (which == nullptr) return true;
  refused_.fetch_add(1);
  const auto now = std::chrono::steady_clock::now();
  if (now - last_refusal_log_ >= std::chrono::seconds(1)) {  // one line per second at most
    last_refusal_log_ = now;
    std::fprintf(stderr,
                 "mgbd: refused a connection from pid %lld (uid %u): %zu %s is the limit "
                 "(--max-connections%s); %llu refused so far\n",
                 static_cast<long long>(peer.pid), peer.uid, limit, which,
                 limit == limits_.max_connections ? "" : "-per-user",
                 static_cast<unsigned long long>(refused_.load()));
  }
  return false;
}

void ConnectionListener::PruneClosed() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    // A connection gRPC closed: its descriptor is gone or now names another socket. (One whose
    // inode could not be read is not tracked: it would otherwise count for ever.)
    const uint64_t inode = it->second.inode;
    if (inode == 0 || SocketInodeOfDescriptor(it->first) != inode) {
      it = connections_.erase(it);
    } else {
      ++it;
    }
  }
}

void ConnectionListener::HandOver(const Pending &p) {
  // From here gRPC or the lane owns the descriptor (and closes it when the connection ends).
  char first = 0;
  if (lane_ && recv(p.fd, &first, 1, MSG_PEEK | MSG_DONTWAIT) == 1 && first == lane::kMagic[0]) {
    lane_(p.fd);
    return;
  }
  grpc::AddInsecureChannelFromFd(server_, p.fd);
}

}  // namespace mgb::server
