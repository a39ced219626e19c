// SchedulerService's Status: what `mgb status`, `mgb top` and the metrics endpoint show.
#include "proto_convert.h"
#include "scheduler_service.h"
#include "service_calls.h"

namespace mgb::server {

grpc::ServerUnaryReactor *SchedulerService::Status(grpc::CallbackServerContext *context,
                                                   const v1::StatusRequest * /*request*/,
                                                   v1::StatusReply *reply) {
  FillStatus(reply);
  return AnswerNow(context, absl::OkStatus());
}

void SchedulerService::FillStatus(v1::StatusReply *reply) {
  core::Snapshot snapshot;
  std::vector<std::string> running_users, waiting_users;
  std::vector<uint64_t> running_jobs, waiting_jobs;
  std::vector<TaskProfile> running_profiles, waiting_profiles;
  uint32_t tasks_not_listed = 0, waiting_not_listed = 0;
  Locked([&] {
    RefreshMemory(CoreNow(), false);
    snapshot = core_->Status();
    // A reply past gRPC's message limit would fail for everyone: the rest are counted.
    const size_t most = service_options_.limits.status_tasks;
    for (auto [tasks, not_listed] : {std::pair{&snapshot.running, &tasks_not_listed},
                                     std::pair{&snapshot.waiting, &waiting_not_listed}}) {
      if (tasks->size() > most) {
        *not_listed = static_cast<uint32_t>(tasks->size() - most);
        tasks->resize(most);
      }
    }
    const SessionRecord unknown;
    auto record_of = [&](core::SessionId session) -> const SessionRecord & {
      auto it = sessions_.find(session);
      return it != sessions_.end() ? it->second : unknown;
    };
    for (const core::TaskSnapshot &t : snapshot.running) {
      const SessionRecord &record = record_of(t.session);
      running_users.push_back(record.user);
      running_jobs.push_back(record.job);
      auto profile = task_profiles_.find(t.task);
      running_profiles.push_back(profile != task_profiles_.end() ? profile->second : TaskProfile{});
    }
    for (const core::TaskSnapshot &t : snapshot.waiting) {
      const SessionRecord &record = record_of(t.session);
      waiting_users.push_back(record.user);
      waiting_jobs.push_back(record.job);
      auto profile = task_profiles_.find(t.task);
      waiting_profiles.push_back(profile != task_profiles_.end() ? profile->second : TaskProfile{});
    }
    for (const auto &[job, grant] : job_grants_.Grants()) {
      v1::JobStatus *j = reply->add_jobs();
      j->set_job_id(job);
      j->set_grant_bytes(grant);
      j->set_held_bytes(job_grants_.Held(job));
    }
    counters_.Fill(reply->mutable_counters());
  });
  ToProto(snapshot, reply);
  reply->set_tasks_not_listed(tasks_not_listed);
  reply->set_waiting_not_listed(waiting_not_listed);
  for (int i = 0; i < reply->tasks_size(); ++i) {
    reply->mutable_tasks(i)->set_user(running_users[i]);
    reply->mutable_tasks(i)->set_peak_bytes(running_profiles[i].peak);
    reply->mutable_tasks(i)->set_profile_key(running_profiles[i].profile_key);
    reply->mutable_tasks(i)->set_provisional(running_profiles[i].provisional);
    reply->mutable_tasks(i)->set_job_id(running_jobs[i]);
  }
  for (int i = 0; i < reply->waiting_size(); ++i) {
    reply->mutable_waiting(i)->set_user(waiting_users[i]);
    reply->mutable_waiting(i)->set_profile_key(waiting_profiles[i].profile_key);
    reply->mutable_waiting(i)->set_provisional(waiting_profiles[i].provisional);
    reply->mutable_waiting(i)->set_job_id(waiting_jobs[i]);
  }
}

}  // namespace mgb::server
