// Conversions between the core's plain structs and mgb.proto messages, and absl -> gRPC status.
#ifndef MGB_SERVICE_SERVER_PROTO_CONVERT_H
#define MGB_SERVICE_SERVER_PROTO_CONVERT_H

#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include <string>

#include "absl/status/status.h"
#include "mgb.pb.h"
#include "mgb/core/scheduler.h"

namespace mgb::server {

// An RPC's answer: a refusal also names its reason in the call's trailing metadata
// (error_reasons.h), which goes out with the status.
grpc::Status ToGrpc(const absl::Status &status, grpc::ServerContextBase *context);
core::LaunchShape FromProto(const v1::LaunchShape &shape);
core::TaskRequest FromProto(const v1::TaskBeginRequest &request);
// Deadlines travel as Unix ms; the service's time line is Unix us. 0 stays "none"; a negative
// one is refused (CheckDeadline) rather than read as "none" beside 1 = "long expired".
core::Micros DeadlineFromUnixMs(int64_t unix_ms);
absl::Status CheckDeadline(int64_t unix_ms);
// Status and Watch name sessions by a public handle ("s<N>"), never by the secret session_id.
std::string PublicSessionName(core::SessionId session);
void ToProto(const core::Snapshot &snapshot, v1::StatusReply *reply);
// A TaskBegin's answer: the task placed on GPU `gpu` with a reservation of memory_bytes, and
// the token that lets the next mgbd restore it.
void FillPlacement(v1::TaskBeginReply *reply, core::TaskId task, int gpu, const core::GpuSpec &spec,
                   uint64_t memory_bytes, const std::string &restore_token);
v1::Event::Kind KindOf(core::EventKind kind);
v1::Event ToProto(const core::Event &event, int64_t pid);

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_PROTO_CONVERT_H
