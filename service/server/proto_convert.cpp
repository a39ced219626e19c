#include "proto_convert.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "error_reasons.h"

namespace mgb::server {
namespace {

core::Dim3 FromProto(const v1::Dim3 &d) { return core::Dim3{d.x(), d.y(), d.z()}; }

void FillTask(const core::TaskSnapshot &t, v1::TaskStatus *out) {
  out->set_task_id(t.task);
  out->set_session_id(PublicSessionName(t.session));
  out->set_pid(t.pid);
  out->set_program(t.program);
  out->set_label(t.label);
  out->set_memory_bytes(t.memory_bytes);
  out->set_warps(t.warps);
  if (t.gpu >= 0) out->set_gpu_index(static_cast<uint32_t>(t.gpu));
  out->set_since_unix_ms(t.since / 1000);
  out->set_allocated_bytes(t.allocated_bytes);
}

}  // namespace

v1::Event::Kind KindOf(core::EventKind kind) {
  switch (kind) {
    case core::EventKind::kSessionOpened: return v1::Event::KIND_SESSION_OPENED;
    case core::EventKind::kSessionClosed: return v1::Event::KIND_SESSION_CLOSED;
    case core::EventKind::kTaskQueued: return v1::Event::KIND_TASK_QUEUED;
    case core::EventKind::kTaskPlaced: return v1::Event::KIND_TASK_PLACED;
    case core::EventKind::kTaskGrown: return v1::Event::KIND_TASK_GROWN;
    case core::EventKind::kTaskEnded: return v1::Event::KIND_TASK_ENDED;
    case core::EventKind::kTaskCancelled: return v1::Event::KIND_TASK_CANCELLED;
  }
  return v1::Event::KIND_UNSPECIFIED;
}

grpc::Status ToGrpc(const absl::Status &status, grpc::ServerContextBase *context) {
  if (status.ok()) return grpc::Status::OK;
  context->AddTrailingMetadata(kErrorReasonKey, ErrorReasonName(status));
  // absl and gRPC share the canonical code numbers.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

core::Micros DeadlineFromUnixMs(int64_t unix_ms) {
  if (unix_ms <= 0) return 0;
  constexpr int64_t kLatest = std::numeric_limits<int64_t>::max() / 1000;  // no overflow below
  return std::min(unix_ms, kLatest) * 1000;
}

absl::Status CheckDeadline(int64_t unix_ms) {
  if (unix_ms >= 0) return absl::OkStatus();
  return core::Refusal(
      core::ErrorReason::kInvalidField,
      absl::StrCat("deadline_unix_ms is ", unix_ms, ": must be >= 0 (0 = no deadline)"));
}

core::LaunchShape FromProto(const v1::LaunchShape &shape) {
  core::LaunchShape s;
  s.grid = FromProto(shape.grid());
  s.block = FromProto(shape.block());
  s.registers_per_thread = shape.registers_per_thread();
  s.shared_bytes_per_block = shape.shared_memory_per_block_bytes();
  return s;
}

core::TaskRequest FromProto(const v1::TaskBeginRequest &request) {
  core::TaskRequest r;
  r.memory_bytes = request.memory_bytes();
  r.shape = FromProto(request.shape());
  r.deadline = DeadlineFromUnixMs(request.deadline_unix_ms());
  r.label = request.label();
  r.preferred_pci_bus_id = request.preferred_pci_bus_id();
  r.visible_pci_bus_ids.assign(request.visible_pci_bus_ids().begin(),
                               request.visible_pci_bus_ids().end());
  return r;
}

std::string PublicSessionName(core::SessionId session) { return absl::StrCat("s", session); }

void ToProto(const core::Snapshot &snapshot, v1::StatusReply *reply) {
  reply->set_mgbd_version(MGB_VERSION);
  reply->set_policy(snapshot.policy);
  reply->set_sessions(snapshot.sessions);
  reply->set_decisions(snapshot.decisions);
  for (size_t i = 0; i < snapshot.gpus.size(); ++i) {
    const core::GpuSnapshot &g = snapshot.gpus[i];
    v1::GpuStatus *out = reply->add_gpus();
    out->set_index(static_cast<uint32_t>(i));
    out->set_name(g.spec.name);
    out->set_uuid(g.spec.uuid);
    out->set_pci_bus_id(g.spec.pci_bus_id);
    out->set_memory_total_bytes(g.spec.memory_bytes);
    out->set_memory_reserved_bytes(g.memory_reserved);
    out->set_memory_used_bytes(g.memory_used);
    out->set_memory_available_bytes(g.memory_available);
    out->set_warps_in_use(g.warps_in_use);
    out->set_warp_capacity(g.spec.warp_capacity());
    out->set_tasks(g.tasks);
    out->set_sessions(g.sessions);
    out->set_sms(g.spec.sms);
  }
  for (const core::TaskSnapshot &t : snapshot.running) FillTask(t, reply->add_tasks());
  for (const core::TaskSnapshot &t : snapshot.waiting) FillTask(t, reply->add_waiting());
}

v1::Event ToProto(const core::Event &event, int64_t pid) {
  v1::Event out;
  out.set_kind(KindOf(event.kind));
  out.set_unix_ms(event.time / 1000);
  out.set_session_id(PublicSessionName(event.session));
  out.set_pid(pid);
  out.set_task_id(event.task);
  if (event.gpu >= 0) out.set_gpu_index(static_cast<uint32_t>(event.gpu));
  out.set_memory_bytes(event.memory_bytes);
  out.set_warps(event.warps);
  out.set_grow(event.is_grow || event.kind == core::EventKind::kTaskGrown);
  out.set_grow_bytes(event.grow_bytes);
  if (event.kind == core::EventKind::kTaskCancelled) {
    out.set_cancel_reason(core::CancelReasonName(event.reason));
  }
  return out;
}

void FillPlacement(v1::TaskBeginReply *reply, core::TaskId task, int gpu, const core::GpuSpec &spec,
                   uint64_t memory_bytes, const std::string &restore_token) {
  reply->set_task_id(task);
  reply->set_restore_token(restore_token);
  reply->set_memory_bytes(memory_bytes);
  reply->set_gpu_index(static_cast<uint32_t>(gpu));
  reply->set_gpu_name(spec.name);
  reply->set_gpu_uuid(spec.uuid);
  reply->set_pci_bus_id(spec.pci_bus_id);
}

}  // namespace mgb::server
