// SchedulerService under Slurm (mgbd --slurm, docs/slurm.md): the job grants Slurm's Prolog and
// Epilog set, and the check that holds a job's tasks to its grant.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "mgb/core/byte_size.h"
#include "mgb/core/error_reason.h"
#include "scheduler_service.h"
#include "service_calls.h"

namespace mgb::server {

absl::Status SchedulerService::CheckJobGrant(uint64_t job, uint64_t bytes,
                                             const std::string &what) const {
  return job == 0 ? absl::OkStatus() : job_grants_.Check(job, bytes, what);
}

absl::Status SchedulerService::CheckJobCall(grpc::CallbackServerContext *context,
                                            uint64_t job_id) const {
  if (!service_options_.job_of) {
    return core::Refusal(core::ErrorReason::kSlurmDisabled,
                         "mgbd runs without --slurm: it keeps no job grants");
  }
  std::optional<PeerIdentity> peer;
  if (service_options_.peer) peer = service_options_.peer(context->peer());
  if (!peer || (peer->uid != 0 && peer->uid != service_options_.hook_uid)) {
    return core::Refusal(
        core::ErrorReason::kPermissionDenied,
        "job grants come from Slurm's Prolog and Epilog: only root or mgbd's own user may set "
        "them");
  }
  if (job_id == 0) return core::Refusal(core::ErrorReason::kInvalidField, "job_id must be > 0");
  return absl::OkStatus();
}

grpc::ServerUnaryReactor *SchedulerService::JobBegin(grpc::CallbackServerContext *context,
                                                     const v1::JobBeginRequest *request,
                                                     v1::JobBeginReply * /*reply*/) {
  const absl::Status status = CheckJobCall(context, request->job_id());
  if (status.ok()) {
    Locked([&] {
      job_grants_.Grant(request->job_id(), request->memory_bytes());
      after_unlock_.push_back([this] { SaveJobGrants(); });
    });
    if (service_options_.verbosity >= 1) {
      std::fprintf(stderr, "mgbd: job %llu may reserve %s\n",
                   static_cast<unsigned long long>(request->job_id()),
                   core::FormatBytes(request->memory_bytes()).c_str());
    }
  }
  return AnswerNow(context, status);
}

grpc::ServerUnaryReactor *SchedulerService::JobEnd(grpc::CallbackServerContext *context,
                                                   const v1::JobEndRequest *request,
                                                   v1::JobEndReply *reply) {
  const absl::Status status = CheckJobCall(context, request->job_id());
  if (status.ok()) {
    Locked([&] {
      uint32_t ended = 0;
      const core::Micros now = CoreNow();
      for (auto &[id, record] : sessions_) {
        if (record.job != request->job_id() || sessions_by_key_.erase(record.key) == 0) continue;
        // Released now, not when the stream's end comes round: the job's processes are gone (or
        // Slurm is killing them), and what they held is the next job's.
        (void)core_->CloseSession(id, now);
        ++ended;
        EndStreamAfterUnlock(
            record, core::Refusal(core::ErrorReason::kJobEnded,
                                  absl::StrCat("Slurm job ", request->job_id(), " ended")));
      }
      job_grants_.End(request->job_id());
      reply->set_sessions_ended(ended);
      after_unlock_.push_back([this] { SaveJobGrants(); });
    });
  }
  return AnswerNow(context, status);
}

void SchedulerService::SaveJobGrants() {
  if (service_options_.job_grants_file.empty()) return;
  std::lock_guard<std::mutex> saving(grants_save_mu_);
  JobGrantList grants;
  {
    std::lock_guard<std::mutex> lock(mu_);
    grants = job_grants_.Grants();
  }
  WarnUnlessSaved(server::SaveJobGrants(service_options_.job_grants_file, grants),
                  grants_save_failing_, "job grants");
}

}  // namespace mgb::server
