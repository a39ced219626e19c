#include "fast_lane.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "error_reasons.h"
#include "lane_wire.h"
#include "proto_convert.h"

namespace mgb::server {

// One lane connection. Frames are written by its reader thread and, for TaskBegins the core
// answers later, by whichever thread runs the service's after-unlock actions: one at a time.
class FastLane::Connection {
 public:
  explicit Connection(int fd) : fd_(fd) {}
  ~Connection() { close(fd_); }
  int fd() const { return fd_; }

  void Write(uint32_t call, lane::Kind kind, const google::protobuf::MessageLite *message) {
    std::lock_guard<std::mutex> lock(write_mu_);
    // A peer that stopped reading is cut off (the send timeout) rather than left to block us.
    if (!lane::WriteFrame(fd_, call, kind, message).ok()) shutdown(fd_, SHUT_RDWR);
  }
  void Answer(uint32_t call, const absl::Status &status) {
    v1::LaneError error;
    error.set_code(static_cast<int32_t>(status.code()));
    error.set_message(std::string(status.message()));
    error.set_reason(WireReason(core::ReasonOf(status)));
    Write(call, lane::Kind::kError, &error);
  }
  void End() { shutdown(fd_, SHUT_RDWR); }

 private:
  const int fd_;
  std::mutex write_mu_;
};

namespace {

// A lane TaskBegin: answered by the service at once or once the core decides; deletes itself.
class LaneBegin final : public SchedulerService::PendingCall {
 public:
  LaneBegin(std::shared_ptr<FastLane::Connection> connection, uint32_t call)
      : connection_(std::move(connection)), call_(call) {}
  void Placed(int gpu, const core::GpuSpec &spec) override {
    FillPlacement(&reply_, task, gpu, spec, memory_bytes);
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

// Blocking I/O for the reader thread; a peer that does not read its answers for a second is cut.
void PrepareSocket(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  timeval send_timeout{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof send_timeout);
}

}  // namespace

void FastLane::Serve(int fd) {
  auto connection = std::make_shared<Connection>(fd);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;  // the connection closes with its last reference
    open_.insert(connection);
  }
  std::thread([this, connection] { Run(connection); }).detach();
}

void FastLane::Stop() {
  std::unique_lock<std::mutex> lock(mu_);
  stopping_ = true;
  for (const auto &connection : open_) connection->End();
  all_ended_.wait(lock, [this] { return open_.empty(); });
}

void FastLane::Run(const std::shared_ptr<Connection> &connection) {
  const int fd = connection->fd();
  PrepareSocket(fd);
  absl::StatusOr<uint32_t> version =
      lane::ReadHello(fd, std::chrono::steady_clock::now() + std::chrono::seconds(5));
  if (version.ok()) {
    if (*version != lane::kVersion) {
      connection->Answer(0, core::Refusal(core::ErrorReason::kLaneVersion,
                                          absl::StrCat("this mgbd speaks lane version ",
                                                       lane::kVersion, " only; use gRPC")));
    } else {
      connection->Write(0, lane::Kind::kHello, nullptr);
      for (;;) {
        absl::StatusOr<lane::Frame> frame = lane::ReadFrame(fd);
        if (!frame.ok()) break;  // ended, or a frame past the size limit: the connection ends
        if (frame->kind == lane::Kind::kBegin) {
          v1::TaskBeginRequest request;
          if (!request.ParseFromString(frame->payload)) {
            connection->Answer(frame->call, core::Refusal(core::ErrorReason::kMalformedFrame,
                                                          "unparseable TaskBeginRequest"));
            continue;
          }
          service_->BeginFromLane(request, new LaneBegin(connection, frame->call),
                                  connection.get());
        } else if (frame->kind == lane::Kind::kEnd) {
          v1::TaskEndRequest request;
          absl::Status status =
              request.ParseFromString(frame->payload)
                  ? service_->EndFromLane(request)
                  : core::Refusal(core::ErrorReason::kMalformedFrame, "unparseable TaskEndRequest");
          if (!status.ok()) connection->Answer(frame->call, status);
        } else if (frame->kind == lane::Kind::kPing) {
          connection->Write(frame->call, lane::Kind::kPong, nullptr);
        } else {
          connection->Answer(frame->call, core::Refusal(core::ErrorReason::kMalformedFrame,
                                                        "unknown lane frame kind"));
          break;
        }
      }
    }
  }
  // Its waiting TaskBegins are withdrawn (their answers go nowhere) before the connection closes.
  service_->CancelLaneCalls(connection.get());
  connection->End();
  std::lock_guard<std::mutex> lock(mu_);
  open_.erase(connection);
  all_ended_.notify_all();
}

}  // namespace mgb::server
