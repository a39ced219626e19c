// The fast lane's wire format: TaskBegin and TaskEnd as length-prefixed protobuf frames on a
// plain Unix-socket connection to mgbd's socket, beside gRPC (docs/api.md, "The fast lane").
//
// A decision through gRPC costs at least one unary call, and on small machines that call alone
// takes ~220 us and ~300 us of CPU (docs/service.md, "Benchmark"); a frame costs one write and
// one read on each side. The messages are the proto's; only the framing is ours.
//
//   connection:  client sends kMagic + version (u32 LE); mgbd answers a kHello frame
//   frame:       u32 LE payload length, u32 LE call id, u8 kind, payload (a serialized message)
#ifndef MGB_SERVICE_LANE_LANE_WIRE_H
#define MGB_SERVICE_LANE_LANE_WIRE_H

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace google::protobuf {
class MessageLite;
}

namespace mgb::lane {

// The first bytes of a lane connection. gRPC's start with "PRI " (HTTP/2's preface), so mgbd's
// listener tells the two apart by the first byte.
inline constexpr char kMagic[4] = {'M', 'G', 'B', 'L'};
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kMaxPayload = 1 << 16;  // a larger frame ends the connection

enum class Kind : uint8_t {
  kBegin = 1,         // client: TaskBeginRequest; answered by kBeginReply or kError
  kEnd = 2,           // client: TaskEndRequest; answered only when refused (kError)
  kPing = 3,          // client: empty; answered by kPong once every earlier frame was handled
  kBeginReply = 129,  // mgbd: TaskBeginReply
  kError = 130,       // mgbd: LaneError (the gRPC status code and message the RPC would give)
  kPong = 131,        // mgbd: empty
  kHello = 132,       // mgbd: empty; the connection is a lane
};

struct Frame {
  uint32_t call = 0;
  Kind kind = Kind::kPing;
  std::string payload;
};

// The client's opening: kMagic and `version`. UNAVAILABLE when the connection is gone.
absl::Status WriteHello(int fd, uint32_t version = kVersion);
// Reads a client's opening and returns its version; INVALID_ARGUMENT when it is not kMagic,
// otherwise ReadExactly's errors.
absl::StatusOr<uint32_t> ReadHello(int fd, std::chrono::steady_clock::time_point until);

// A whole frame's bytes. INVALID_ARGUMENT past kMaxPayload.
absl::StatusOr<std::string> EncodeFrame(uint32_t call, Kind kind,
                                        const google::protobuf::MessageLite *message = nullptr);

// Writes a whole frame (never raises SIGPIPE). UNAVAILABLE when the connection is gone.
absl::Status WriteFrame(int fd, uint32_t call, Kind kind,
                        const google::protobuf::MessageLite *message = nullptr);

// Reads one frame, waiting at most until `until` (none: for ever). UNAVAILABLE when the
// connection ended, DEADLINE_EXCEEDED at `until`, INVALID_ARGUMENT for a frame past kMaxPayload.
absl::StatusOr<Frame> ReadFrame(
    int fd, std::optional<std::chrono::steady_clock::time_point> until = std::nullopt);

// The size of a frame's header, and its parts (for mgbd's lane, which reads without blocking).
inline constexpr size_t kFrameHeader = 9;
inline constexpr size_t kHelloSize = sizeof kMagic + 4;
uint32_t FrameLength(const char *header);
Frame FrameWithoutPayload(const char *header);
// The version a complete opening names; INVALID_ARGUMENT when it is not kMagic.
absl::StatusOr<uint32_t> ParseHello(const char *hello);

// Reads exactly `size` bytes (same errors as ReadFrame).
absl::Status ReadExactly(int fd, void *data, size_t size,
                         std::optional<std::chrono::steady_clock::time_point> until);

}  // namespace mgb::lane

#endif  // MGB_SERVICE_LANE_LANE_WIRE_H
