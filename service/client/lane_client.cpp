#include "lane_client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "error_reasons.h"
#include "lane_wire.h"

namespace mgb {
namespace {

absl::Status FromLaneError(const std::string &payload) {
  v1::LaneError error;
  if (!error.ParseFromString(payload))
    return absl::InternalError("an unreadable lane error from mgbd");
  return core::WithReason(
      absl::Status(static_cast<absl::StatusCode>(error.code()), error.message()),
      CoreReason(error.reason()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<LaneClient>> LaneClient::Open(const std::string &socket_path,
                                                             const std::string &program,
                                                             std::chrono::milliseconds timeout) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof address.sun_path) {
    return absl::InvalidArgumentError(absl::StrCat("socket path too long: ", socket_path));
  }
  std::memcpy(address.sun_path, socket_path.c_str(), socket_path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
  std::unique_ptr<LaneClient> lane(new LaneClient(fd, program));
  if (connect(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0) {
    return absl::UnavailableError(
        absl::StrCat("connecting to ", socket_path, ": ", std::strerror(errno)));
  }
  if (absl::Status st = lane::WriteHello(fd); !st.ok()) return st;
  // An mgbd without the lane hands the connection to gRPC, which closes it (or says nothing).
  absl::StatusOr<lane::Frame> answer =
      lane::ReadFrame(fd, std::chrono::steady_clock::now() + timeout);
  if (!answer.ok() || answer->kind != lane::Kind::kHello) {
    return absl::UnimplementedError(
        absl::StrCat("the mgbd at ", socket_path, " does not offer the fast lane"));
  }
  return lane;
}

LaneClient::~LaneClient() { close(fd_); }

absl::StatusOr<std::string> LaneClient::AnswerTo(uint32_t call, Until until) {
  for (;;) {
    absl::StatusOr<lane::Frame> frame = lane::ReadFrame(fd_, until);
    if (!frame.ok()) {
      broken_ = true;
      return frame.status();
    }
    if (frame->call == call) {
      unconfirmed_ends_ = 0;  // mgbd handles a connection's frames in order
      if (frame->kind == lane::Kind::kError) return FromLaneError(frame->payload);
      return std::move(frame->payload);
    }
    if (frame->kind == lane::Kind::kError) {  // an earlier TaskEnd's refusal
      std::fprintf(stderr, "mgb: %s: mgbd did not end a task: %s\n", program_.c_str(),
                   FromLaneError(frame->payload)
                       .ToString(absl::StatusToStringMode::kWithNoExtraData)
                       .c_str());
    }
  }
}

absl::StatusOr<v1::TaskBeginReply> LaneClient::Begin(const v1::TaskBeginRequest &request,
                                                     Until until) {
  const uint32_t call = next_call_++;
  if (absl::Status st = lane::WriteFrame(fd_, call, lane::Kind::kBegin, &request); !st.ok()) {
    broken_ = true;
    return st;
  }
  absl::StatusOr<std::string> payload = AnswerTo(call, until);
  if (!payload.ok()) return payload.status();
  v1::TaskBeginReply reply;
  if (!reply.ParseFromString(*payload)) {
    broken_ = true;
    return absl::InternalError("an unreadable TaskBegin answer from mgbd");
  }
  return reply;
}

absl::Status LaneClient::SendEnd(const v1::TaskEndRequest &request) {
  if (absl::Status st = lane::WriteFrame(fd_, next_call_++, lane::Kind::kEnd, &request); !st.ok()) {
    broken_ = true;
    return st;
  }
  ++unconfirmed_ends_;
  return absl::OkStatus();
}

absl::Status LaneClient::Ping(Until until) {
  const uint32_t call = next_call_++;
  if (absl::Status st = lane::WriteFrame(fd_, call, lane::Kind::kPing); !st.ok()) {
    broken_ = true;
    return st;
  }
  return AnswerTo(call, until).status();
}

absl::StatusOr<std::unique_ptr<LaneClient>> LanePool::Open() {
  absl::StatusOr<std::unique_ptr<LaneClient>> lane =
      LaneClient::Open(socket_path_, program_, std::chrono::milliseconds(2000));
  if (lane.status().code() == absl::StatusCode::kUnimplemented) {
    std::lock_guard<std::mutex> lock(mu_);
    off_ = true;
  }
  return lane;
}

std::optional<absl::StatusOr<v1::TaskBeginReply>> LanePool::Begin(
    const v1::TaskBeginRequest &request, LaneClient::Until until) {
  std::unique_ptr<LaneClient> lane;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (off_) return std::nullopt;
    if (!idle_.empty()) {
      lane = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  if (lane == nullptr) {
    absl::StatusOr<std::unique_ptr<LaneClient>> opened = Open();
    if (opened.status().code() == absl::StatusCode::kUnimplemented) return std::nullopt;
    if (!opened.ok()) return absl::StatusOr<v1::TaskBeginReply>(opened.status());
    lane = std::move(*opened);
  }
  absl::StatusOr<v1::TaskBeginReply> answer = lane->Begin(request, until);
  if (!lane->broken()) {
    std::lock_guard<std::mutex> lock(mu_);
    idle_.push_back(std::move(lane));
  }
  return answer;
}

std::optional<absl::Status> LanePool::End(const v1::TaskEndRequest &request) {
  std::lock_guard<std::mutex> lock(end_mu_);
  if (end_lane_ == nullptr || end_lane_->broken()) {
    {
      std::lock_guard<std::mutex> pool_lock(mu_);
      if (off_) return std::nullopt;
    }
    absl::StatusOr<std::unique_ptr<LaneClient>> opened = Open();
    if (opened.status().code() == absl::StatusCode::kUnimplemented) return std::nullopt;
    if (!opened.ok()) return opened.status();
    end_lane_ = std::move(*opened);
  }
  return end_lane_->SendEnd(request);
}

void LanePool::Flush(LaneClient::Until until) {
  std::lock_guard<std::mutex> lock(end_mu_);
  if (end_lane_ != nullptr && !end_lane_->broken() && end_lane_->unconfirmed_ends() > 0) {
    (void)end_lane_->Ping(until);
  }
}

bool FastLaneWanted() {
  const char *env = std::getenv("MGB_FAST_LANE");
  return env == nullptr || std::strcmp(env, "0") != 0;
}

}  // namespace mgb
