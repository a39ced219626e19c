#include "client_channel.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "error_reasons.h"

namespace mgb {

std::shared_ptr<grpc::Channel> ChannelTo(const std::string &socket_path) {
  grpc::ChannelArguments args;
  // No bandwidth-delay-product probes on a local socket: gRPC's BdpEstimator draws their jitter
  // from the C library's rand(), which shifted the rand() sequence of the program libmgb is
  // linked into (found on an H100: a particle program seeded with srand() printed different
  // distances rewritten; the rand() calls traced to BdpEstimator::CompletePing).
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  // Status lists up to 2,000 running and 2,000 waiting tasks: more than gRPC's 4 MB default.
  args.SetMaxReceiveMessageSize(64 << 20);
  return grpc::CreateCustomChannel("unix:" + socket_path, grpc::InsecureChannelCredentials(), args);
}

absl::Status WaitConnected(grpc::Channel &channel, const std::string &socket_path,
                           std::chrono::milliseconds timeout) {
  if (channel.WaitForConnected(std::chrono::system_clock::now() + timeout)) return absl::OkStatus();
  // Say why when the file tells: a socket this user may not use is not "mgbd not running".
  if (access(socket_path.c_str(), F_OK) == 0 && access(socket_path.c_str(), R_OK | W_OK) != 0 &&
      errno == EACCES) {
    return absl::PermissionDeniedError(absl::StrCat(
        "mgbd's socket ", socket_path,
        " exists but this user may not connect to it (permission denied); mgbd admits its own "
        "user and group: ask its operator to add you to that group"));
  }
  return absl::UnavailableError(absl::StrCat("mgbd is not reachable at socket ", socket_path,
                                             " (waited ", timeout.count(),
                                             " ms); is mgbd running? Use --socket or MGB_SOCKET"));
}

absl::Status FromGrpc(const grpc::Status &status, const grpc::ClientContext &context) {
  if (status.ok()) return absl::OkStatus();
  absl::Status out(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
  const auto &trailers = context.GetServerTrailingMetadata();
  auto reason = trailers.find(kErrorReasonKey);
  if (reason == trailers.end()) return out;
  return core::WithReason(std::move(out), ParseErrorReason(std::string_view(
                                              reason->second.data(), reason->second.size())));
}

}  // namespace mgb
