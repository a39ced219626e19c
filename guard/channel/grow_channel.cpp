#include "grow_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace mgb::guard {
namespace {

constexpr uint32_t kVersion = 1;

struct RequestFrame {
  uint32_t version = kVersion;
  uint32_t gpu = 0;  // the run's GPU, by CUDA ordinal in the program
  uint64_t missing_bytes = 0;
};

struct ReplyFrame {
  int32_t verdict = GrowAnswer::kUnavailable;
  uint32_t reserved_for_later = 0;
  uint64_t reserved = 0;
  char message[240] = {};
};

std::string SocketPath(const std::string &dir) { return dir + "/grow.sock"; }

bool FillAddress(const std::string &path, sockaddr_un *address) {
  std::memset(address, 0, sizeof(*address));
  address->sun_family = AF_UNIX;
  if (path.size() >= sizeof(address->sun_path)) return false;
  std::memcpy(address->sun_path, path.c_str(), path.size() + 1);
  return true;
}

GrowAnswer Unavailable(const std::string &why) {
  GrowAnswer answer;
  answer.message = why;
  return answer;
}

}  // namespace

std::unique_ptr<GrowServer> GrowServer::Start(const std::string &dir, Handler handler,
                                              std::string *error) {
  const std::string path = SocketPath(dir);
  sockaddr_un address;
  if (!FillAddress(path, &address)) {
    *error = path + ": path too long";
    return nullptr;
  }
  const int listener = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (listener < 0) {
    *error = std::string("socket: ") + std::strerror(errno);
    return nullptr;
  }
  if (bind(listener, reinterpret_cast<sockaddr *>(&address), sizeof(address)) != 0 ||
      listen(listener, 64) != 0) {
    *error = "cannot listen on " + path + ": " + std::strerror(errno);
    close(listener);
    return nullptr;
  }
  int wake[2];
  if (pipe2(wake, O_CLOEXEC) != 0) {
    *error = std::string("pipe: ") + std::strerror(errno);
    close(listener);
    return nullptr;
  }
  return std::unique_ptr<GrowServer>(
      new GrowServer(listener, wake[0], wake[1], std::move(handler)));
}

GrowServer::GrowServer(int listener, int wake_read, int wake_write, Handler handler)
    : listener_(listener),
      wake_read_(wake_read),
      wake_write_(wake_write),
      handler_(std::move(handler)) {
  thread_ = std::thread([this] { Serve(); });
}

GrowServer::~GrowServer() {
  const char byte = 0;
  (void)!write(wake_write_, &byte, 1);
  thread_.join();
  close(listener_);
  close(wake_read_);
  close(wake_write_);
}

void GrowServer::Serve() {
  std::vector<pollfd> fds = {{wake_read_, POLLIN, 0}, {listener_, POLLIN, 0}};
  while (true) {
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents != 0) break;
    if (fds[1].revents & POLLIN) {
      const int client = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client >= 0) fds.push_back({client, POLLIN, 0});
    }
    for (size_t i = 2; i < fds.size();) {
      if (fds[i].revents == 0) {
        ++i;
        continue;
      }
      RequestFrame request;
      const ssize_t got = recv(fds[i].fd, &request, sizeof(request), 0);
      if (got != static_cast<ssize_t>(sizeof(request)) || request.version != kVersion) {
        close(fds[i].fd);  // gone, or not speaking our protocol
        fds.erase(fds.begin() + static_cast<ptrdiff_t>(i));
        continue;
      }
      const GrowAnswer answer = handler_(request.missing_bytes, request.gpu);
      ReplyFrame reply;
      reply.verdict = answer.verdict;
      reply.reserved = answer.reserved;
      std::strncpy(reply.message, answer.message.c_str(), sizeof(reply.message) - 1);
      (void)!send(fds[i].fd, &reply, sizeof(reply), MSG_NOSIGNAL);
      fds[i].revents = 0;
      ++i;
    }
  }
  for (size_t i = 2; i < fds.size(); ++i) close(fds[i].fd);
}

GrowRequester::~GrowRequester() {
  if (fd_ >= 0 && owner_ == getpid()) close(fd_);
}

GrowAnswer GrowRequester::Ask(uint64_t missing_bytes, uint32_t gpu) {
  std::lock_guard lock(mu_);
  if (fd_ >= 0 && owner_ != getpid()) fd_ = -1;  // a forked child: the parent's connection
  if (fd_ < 0) {
    const std::string path = SocketPath(dir_);
    sockaddr_un address;
    if (!FillAddress(path, &address)) return Unavailable(path + ": path too long");
    fd_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return Unavailable(std::string("socket: ") + std::strerror(errno));
    if (connect(fd_, reinterpret_cast<sockaddr *>(&address), sizeof(address)) != 0) {
      const std::string error = std::strerror(errno);
      close(fd_);
      fd_ = -1;
      return Unavailable("cannot reach mgb run at " + path + ": " + error);
    }
    owner_ = getpid();
  }
  RequestFrame request;
  request.missing_bytes = missing_bytes;
  request.gpu = gpu;
  ReplyFrame reply;
  ssize_t got = -1;
  if (send(fd_, &request, sizeof(request), MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof(request))) {
    do {
      got = recv(fd_, &reply, sizeof(reply), 0);
    } while (got < 0 && errno == EINTR);
  }
  if (got != static_cast<ssize_t>(sizeof(reply))) {
    close(fd_);
    fd_ = -1;
    return Unavailable("mgb run stopped answering grows");
  }
  GrowAnswer answer;
  answer.verdict = static_cast<GrowAnswer::Verdict>(reply.verdict);
  answer.reserved = reply.reserved;
  answer.message.assign(reply.message, strnlen(reply.message, sizeof(reply.message)));
  return answer;
}

}  // namespace mgb::guard
