#include "fast_lane.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "error_reasons.h"
#include "lane_wire.h"
#include "proto_convert.h"

namespace mgb::server {

// One lane connection. Its answers are queued and sent as the socket takes them, by whichever
// thread completes a call (the loop, or one running the service's after-unlock actions) or by
// the loop once the socket is writable again: one at a time, never blocking.
class FastLane::Connection {
 public:
  Connection(int fd, int epoll_fd)
      : opened(std::chrono::steady_clock::now()), fd_(fd), epoll_fd_(epoll_fd) {}
  ~Connection() { close(fd_); }
  int fd() const { return fd_; }

  void Write(uint32_t call, lane::Kind kind, const google::protobuf::MessageLite *message) {
    absl::StatusOr<std::string> frame = lane::EncodeFrame(call, kind, message);
    std::lock_guard<std::mutex> lock(write_mu_);
    if (cut_) return;
    if (!frame.ok()) return CutLocked();
    queued_ += *frame;
    SendQueuedLocked();
  }
  void Answer(uint32_t call, const absl::Status &status) {
    v1::LaneError error;
    error.set_code(static_cast<int32_t>(status.code()));
    error.set_message(std::string(status.message()));
    error.set_reason(WireReason(core::ReasonOf(status)));
    Write(call, lane::Kind::kError, &error);
  }
  // The socket is writable again.
  void Flush() {
    std::lock_guard<std::mutex> lock(write_mu_);
    if (!cut_) SendQueuedLocked();
  }
  // Ends the connection both ways; the loop then sees it hang up.
  void End() { shutdown(fd_, SHUT_RDWR); }

  // The loop thread's alone: what was read and not yet handled, and the opening's state.
  std::string inbound;
  bool greeted = false;
  const std::chrono::steady_clock::time_point opened;

 private:
  void SendQueuedLocked() {
    size_t sent = 0;
    while (sent < queued_.size()) {
      const ssize_t n =
          send(fd_, queued_.data() + sent, queued_.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        break;
      } else {
        return CutLocked();  // the peer is gone
      }
    }
    queued_.erase(0, sent);
    // A peer that stopped reading is cut off rather than left to grow mgbd's memory.
    if (queued_.size() > kMaxQueuedBytes) return CutLocked();
    WatchWritableLocked(!queued_.empty());
  }
  void WatchWritableLocked(bool writable) {
    if (writable == watching_writable_) return;
    watching_writable_ = writable;
    epoll_event event{};
    event.events = EPOLLIN | EPOLLRDHUP;
    if (writable) event.events |= EPOLLOUT;
    event.data.fd = fd_;
    (void)epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd_, &event);  // ENOENT once the loop ended it
  }
  void CutLocked() {
    cut_ = true;
    queued_.clear();
    shutdown(fd_, SHUT_RDWR);
  }

  const int fd_;
  const int epoll_fd_;
  std::mutex write_mu_;
  std::string queued_;
  bool watching_writable_ = false;
  bool cut_ = false;
};

namespace {

// A lane TaskBegin: answered by the service at once or once the core decides; deletes itself.
class LaneBegin final : public SchedulerService::PendingCall {
 public:
  LaneBegin(std::shared_ptr<FastLane::Connection> connection, uint32_t call)
      : connection_(std::move(connection)), call_(call) {}
  void Placed(int gpu, const core::GpuSpec &spec) override {
    FillPlacement(&reply_, task, gpu, spec, memory_bytes, restore_token);
  }
  void Complete(const absl::Status &status) override {
    if (status.ok()) {
      connection_->Write(call_, lane::Kind::kBeginReply, &reply_);
    } else {
      connection_->Answer(call_, status);
    }
    delete this;
  }

 private:
  std::shared_ptr<FastLane::Connection> connection_;
  uint32_t call_;
  v1::TaskBeginReply reply_;
};

// Bytes read from one connection before the loop turns to the others (fairness under floods).
constexpr size_t kReadBudget = 256 * 1024;

}  // namespace

FastLane::FastLane(SchedulerService *service) : service_(service) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    stopping_ = true;  // Serve closes every connection; mgbd answers on gRPC alone
    std::fprintf(stderr, "mgbd: the fast lane could not start (%s); gRPC serves every call\n",
                 std::strerror(errno));
    return;
  }
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.fd = wake_fd_;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake);
  thread_ = std::thread([this] { Loop(); });
}

void FastLane::Serve(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  auto connection = std::make_shared<Connection>(fd, epoll_fd_);
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return;  // the connection closes with its last reference
  epoll_event event{};
  event.events = EPOLLIN | EPOLLRDHUP;
  event.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) return;
  open_[fd] = std::move(connection);
}

void FastLane::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof one);
  }
  if (thread_.joinable()) thread_.join();
  for (int *fd : {&epoll_fd_, &wake_fd_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

size_t FastLane::open_connections() {
  std::lock_guard<std::mutex> lock(mu_);
  return open_.size();
}

void FastLane::Loop() {
  std::vector<epoll_event> events(256);
  auto last_sweep = std::chrono::steady_clock::now();
  for (;;) {
    const int ready = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), 1000);
    for (int i = 0; i < ready; ++i) {
      if (events[i].data.fd == wake_fd_) {
        uint64_t count = 0;
        (void)!read(wake_fd_, &count, sizeof count);
        continue;
      }
      std::shared_ptr<Connection> connection;
      {
        std::lock_guard<std::mutex> lock(mu_);
        const auto it = open_.find(events[i].data.fd);
        if (it == open_.end()) continue;
        connection = it->second;
      }
      if ((events[i].events & EPOLLOUT) != 0) connection->Flush();
      if ((events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) {
        ReadFrom(connection);
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) break;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_sweep >= std::chrono::seconds(1)) {
      last_sweep = now;
      EndStalledOpenings();
    }
  }
  std::vector<std::shared_ptr<Connection>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto &[fd, connection] : open_) all.push_back(connection);
  }
  for (const auto &connection : all) EndConnection(connection);
}

void FastLane::ReadFrom(const std::shared_ptr<Connection> &connection) {
  char buffer[16384];
  size_t budget = kReadBudget;
  while (budget > 0) {
    const ssize_t n = read(connection->fd(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) return EndConnection(connection);  // closed, or an error
    budget -= std::min(budget, static_cast<size_t>(n));
    std::string &in = connection->inbound;
    in.append(buffer, static_cast<size_t>(n));
    size_t used = 0;
    if (!connection->greeted) {
      if (in.size() < lane::kHelloSize) continue;
      absl::StatusOr<uint32_t> version = lane::ParseHello(in.data());
      if (!version.ok()) return EndConnection(connection);
      if (*version != lane::kVersion) {
        connection->Answer(0, core::Refusal(core::ErrorReason::kLaneVersion,
                                            absl::StrCat("this mgbd speaks lane version ",
                                                         lane::kVersion, " only; use gRPC")));
        return EndConnection(connection);
      }
      connection->Write(0, lane::Kind::kHello, nullptr);
      connection->greeted = true;
      used = lane::kHelloSize;
    }
    while (in.size() - used >= lane::kFrameHeader) {
      const uint32_t length = lane::FrameLength(in.data() + used);
      // A frame past the size limit ends the connection, as it did when frames were read whole.
      if (length > lane::kMaxPayload) return EndConnection(connection);
      if (in.size() - used < lane::kFrameHeader + length) break;
      lane::Frame frame = lane::FrameWithoutPayload(in.data() + used);
      frame.payload.assign(in, used + lane::kFrameHeader, length);
      used += lane::kFrameHeader + length;
      if (!Dispatch(connection, frame)) return EndConnection(connection);
    }
    in.erase(0, used);
  }
}

bool FastLane::Dispatch(const std::shared_ptr<Connection> &connection, const lane::Frame &frame) {
  if (frame.kind == lane::Kind::kBegin) {
    v1::TaskBeginRequest request;
    if (!request.ParseFromString(frame.payload)) {
      connection->Answer(frame.call, core::Refusal(core::ErrorReason::kMalformedFrame,
                                                   "unparseable TaskBeginRequest"));
      return true;
    }
    service_->BeginFromLane(request, new LaneBegin(connection, frame.call), connection.get());
  } else if (frame.kind == lane::Kind::kEnd) {
    v1::TaskEndRequest request;
    absl::Status status =
        request.ParseFromString(frame.payload)
            ? service_->EndFromLane(request)
            : core::Refusal(core::ErrorReason::kMalformedFrame, "unparseable TaskEndRequest");
    if (!status.ok()) connection->Answer(frame.call, status);
  } else if (frame.kind == lane::Kind::kPing) {
    connection->Write(frame.call, lane::Kind::kPong, nullptr);
  } else {
    connection->Answer(
        frame.call, core::Refusal(core::ErrorReason::kMalformedFrame, "unknown lane frame kind"));
    return false;
  }
  return true;
}

void FastLane::EndConnection(const std::shared_ptr<Connection> &connection) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = open_.find(connection->fd());
    if (it == open_.end() || it->second != connection) return;  // already ended
    open_.erase(it);
  }
  (void)epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, connection->fd(), nullptr);
  // Its waiting TaskBegins are withdrawn (their answers go nowhere) before the connection closes.
  service_->CancelLaneCalls(connection.get());
  connection->End();
}

void FastLane::EndStalledOpenings() {
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<Connection>> stalled;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto &[fd, connection] : open_) {
      if (!connection->greeted && now - connection->opened >= kHelloTimeout) {
        stalled.push_back(connection);
      }
    }
  }
  for (const auto &connection : stalled) EndConnection(connection);
}

}  // namespace mgb::server
