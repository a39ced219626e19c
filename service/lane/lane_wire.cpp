#include "lane_wire.h"

#include <google/protobuf/message_lite.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace mgb::lane {
namespace {

void PutU32(char *out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

uint32_t GetU32(const unsigned char *in) {
  return uint32_t{in[0]} | uint32_t{in[1]} << 8 | uint32_t{in[2]} << 16 | uint32_t{in[3]} << 24;
}

constexpr size_t kHeader = kFrameHeader;  // length, call, kind

// Sends all of `data` (never raising SIGPIPE).
absl::Status SendAll(int fd, const char *data, size_t size) {
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return absl::UnavailableError(absl::StrCat("mgbd's lane connection is gone (",
                                                 n < 0 ? std::strerror(errno) : "closed", ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteHello(int fd, uint32_t version) {
  char hello[sizeof kMagic + 4];
  std::memcpy(hello, kMagic, sizeof kMagic);
  PutU32(hello + sizeof kMagic, version);
  return SendAll(fd, hello, sizeof hello);
}

absl::StatusOr<uint32_t> ParseHello(const char *hello) {
  if (std::memcmp(hello, kMagic, sizeof kMagic) != 0) {
    return absl::InvalidArgumentError("not a lane connection");
  }
  return GetU32(reinterpret_cast<const unsigned char *>(hello) + sizeof kMagic);
}

absl::StatusOr<uint32_t> ReadHello(int fd, std::chrono::steady_clock::time_point until) {
  char hello[kHelloSize];
  if (absl::Status st = ReadExactly(fd, hello, sizeof hello, until); !st.ok()) return st;
  return ParseHello(hello);
}

uint32_t FrameLength(const char *header) {
  return GetU32(reinterpret_cast<const unsigned char *>(header));
}

Frame FrameWithoutPayload(const char *header) {
  Frame frame;
  frame.call = GetU32(reinterpret_cast<const unsigned char *>(header) + 4);
  frame.kind = static_cast<Kind>(static_cast<unsigned char>(header[8]));
  return frame;
}

absl::Status WriteFrame(int fd, uint32_t call, Kind kind,
                        const google::protobuf::MessageLite *message) {
  absl::StatusOr<std::string> frame = EncodeFrame(call, kind, message);
  if (!frame.ok()) return frame.status();
  return SendAll(fd, frame->data(), frame->size());
}

absl::StatusOr<std::string> EncodeFrame(uint32_t call, Kind kind,
                                        const google::protobuf::MessageLite *message) {
  std::string buffer(kHeader, '\0');
  if (message != nullptr && !message->AppendToString(&buffer)) {
    return absl::InternalError("a lane message could not be serialized");
  }
  const size_t payload = buffer.size() - kHeader;
  if (payload > kMaxPayload) return absl::InvalidArgumentError("a lane message is too large");
  PutU32(buffer.data(), static_cast<uint32_t>(payload));
  PutU32(buffer.data() + 4, call);
  buffer[8] = static_cast<char>(kind);
  return buffer;
}

absl::Status ReadExactly(int fd, void *data, size_t size,
                         std::optional<std::chrono::steady_clock::time_point> until) {
  char *out = static_cast<char *>(data);
  size_t got = 0;
  while (got < size) {
    if (until) {
      const auto left =
          std::chrono::ceil<std::chrono::milliseconds>(*until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return absl::DeadlineExceededError("no answer on the lane in time");
      pollfd p{fd, POLLIN, 0};
      const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready == 0) continue;  // the loop's check answers DEADLINE_EXCEEDED
    }
    const ssize_t n = read(fd, out + got, size - got);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
      continue;
    } else {
      return absl::UnavailableError(absl::StrCat("the lane connection ended (",
                                                 n < 0 ? std::strerror(errno) : "closed", ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Frame> ReadFrame(int fd,
                                std::optional<std::chrono::steady_clock::time_point> until) {
  char header[kHeader];
  if (absl::Status st = ReadExactly(fd, header, kHeader, until); !st.ok()) return st;
  const uint32_t length = FrameLength(header);
  if (length > kMaxPayload) {
    return absl::InvalidArgumentError(
        absl::StrCat("a lane frame of ", length, " bytes (at most ", kMaxPayload, ")"));
  }
  Frame frame = FrameWithoutPayload(header);
  frame.payload.resize(length);
  if (length > 0) {
    if (absl::Status st = ReadExactly(fd, frame.payload.data(), length, until); !st.ok()) return st;
  }
  return frame;
}

}  // namespace mgb::lane
