// SchedulerService's streams: Attach (a session lives as long as its stream) and Watch (every
// event, as it happens), the server-stream writer they share, and the fan-out of events to
// watchers.
#include <pwd.h>
#include <malloc.h>

#include <deque>

#include "absl/strings/str_cat.h"
#include "mgb/core/error_reason.h"
#include "proto_convert.h"
#include "random_bytes.h"
#include "scheduler_service.h"
#include "service_calls.h"

namespace mgb::server {
namespace {

// 128 random bits from the kernel, as 32 hex digits: the secret that names a session.
std::string RandomSessionKey() {
  unsigned char bytes[16];
  FillRandom(bytes, sizeof bytes);
  static const char kHex[] = "0123456789abcdef";
  std::string key;
  for (unsigned char b : bytes) {
    key += kHex[b >> 4];
    key += kHex[b & 15];
  }
  return key;
}

constexpr size_t kMaxWatchBacklog = 1000;  // a watcher further behind than this is dropped

// The user's name for a uid, or the number when the system has no name for it.
std::string UserName(uint32_t uid) {
  passwd entry{};
  passwd *found = nullptr;
  std::vector<char> buffer(16384);
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found != nullptr) {
    return found->pw_name;
  }
  return std::to_string(uid);
}

}  // namespace

// ---- streams --------------------------------------------------------------------------------

// A server stream that writes queued messages one at a time and finishes safely: Finish waits
// for an in-flight write, and Push after the end is ignored. Owns itself through self_ (released
// in OnDone) so that actions queued under mu_ may still hold it briefly after the stream ended.
template <class Message>
class SchedulerService::Stream : public grpc::ServerWriteReactor<Message> {
 public:
  explicit Stream(grpc::ServerContextBase *context) : context_(context) {}
  // Queues a message; returns false if the backlog is full (the caller should end the stream).
  bool Push(Message message) {
    std::lock_guard<std::mutex> lock(mu_);
    if (finish_requested_) return true;
    if (queue_.size() >= kMaxWatchBacklog) return false;
    queue_.push_back(std::move(message));
    return true;
  }
  // Starts the next write if none is in flight. Never call with the service's mu_ held.
  void Kick() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (writing_ || finish_requested_ || queue_.empty()) return;
      writing_ = true;
      current_ = std::move(queue_.front());
      queue_.pop_front();
    }
    this->StartWrite(&current_);
  }
  void RequestFinish(const absl::Status &status) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (finish_requested_) return;
      finish_requested_ = true;
      status_ = ToGrpc(status, context_);
      if (writing_) return;  // OnWriteDone finishes
    }
    this->Finish(status_);
  }
  void OnWriteDone(bool ok) override {
    bool write_next = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      writing_ = false;
      if (!ok && !finish_requested_) {  // the peer is gone; OnCancel follows
        finish_requested_ = true;
        status_ = ToGrpc(CancelledCall(), context_);
      }
      if (!finish_requested_) {
        if (queue_.empty()) return;
        writing_ = write_next = true;
        current_ = std::move(queue_.front());
        queue_.pop_front();
      }
    }
    if (write_next) {
      this->StartWrite(&current_);
    } else {
      this->Finish(status_);
    }
  }

 protected:
  std::shared_ptr<Stream> self_;

 private:
  grpc::ServerContextBase *const context_;  // the call's: it outlives the reactor (OnDone)
  std::mutex mu_;
  std::deque<Message> queue_;
  Message current_;
  bool writing_ = false;
  bool finish_requested_ = false;
  grpc::Status status_;
};

// Attach: one SessionInfo, then the stream stays open; its end (client exit, crash, SIGKILL,
// lost socket, server shutdown) closes the session in the core, releasing all it holds.
class SchedulerService::AttachReactor final : public Stream<v1::SessionEvent> {
 public:
  AttachReactor(SchedulerService *service, grpc::ServerContextBase *context,
                const v1::AttachRequest &request, const std::string &user, uint64_t job,
                absl::Status admitted)
      : Stream(context), service_(service), key_(RandomSessionKey()) {
    self_.reset(this);
    std::weak_ptr<AttachReactor> me = std::static_pointer_cast<AttachReactor>(self_);
    v1::SessionEvent event;
    absl::Status refused = std::move(admitted);
    const ClientLimits &limits = service_->service_options_.limits;
    service_->Locked([&] {
      if (!refused.ok()) return;
      refused = service_->user_counts_.AdmitSession(user);
      if (!refused.ok()) return;
      service_->user_counts_.SessionOpened(user);
      user_ = user;
      service_->opening_pid_ = request.pid();
      const core::SessionId id = service_->core_->OpenSession(
          request.pid(), CappedText(request.program(), limits.program_bytes), CoreNow(),
          request.queue_priority());
      service_->opening_pid_ = 0;
      service_->sessions_by_key_[key_] = id;
      service_->sessions_[id] = SessionRecord{key_, request.pid(), user, job, me};
      session_ = id;
      v1::SessionInfo *info = event.mutable_info();
      for (const v1::RestoredTask &held : request.restore()) {
        absl::StatusOr<core::TaskId> restored = service_->RestoreLocked(id, held);
        if (!restored.ok()) {
          std::fprintf(stderr, "mgbd: pid %lld could not restore a task: %s\n",
                       static_cast<long long>(request.pid()),
                       std::string(restored.status().message()).c_str());
        }
        info->add_restored_task_ids(restored.ok() ? *restored : 0);
        info->add_restored_task_tokens(
            restored.ok() ? service_->TokenFor(id, *restored, static_cast<int>(held.gpu_index()),
                                               held.memory_bytes())
                          : std::string());
      }
      info->set_session_id(key_);
      info->set_policy(service_->core_->policy().Name());
      info->set_mps_pipe_directory(service_->service_options_.mps_pipe_directory);
      info->set_context_reserve_bytes(service_->core_->context_reserve_bytes());
      info->set_mgbd_version(MGB_VERSION);
    });
    if (!refused.ok()) {
      RequestFinish(refused);
      return;
    }
    Push(std::move(event));
    Kick();
  }
  void OnCancel() override { RequestFinish(CancelledCall()); }
  // OnDone comes exactly once however the stream ended: the one place the session closes.
  void OnDone() override {
    service_->Locked([&] {
      if (session_ == 0) return;  // refused
      service_->sessions_by_key_.erase(key_);
      (void)service_->core_->CloseSession(session_, CoreNow());
      service_->sessions_.erase(session_);
      service_->user_counts_.SessionClosed(user_);
      // What the client's requests cost (large ones included) goes back to the system.
      if (service_->sessions_.empty()) service_->after_unlock_.push_back([] { malloc_trim(0); });
    });
    self_.reset();
  }

 private:
  SchedulerService *service_;
  std::string key_;
  std::string user_;
  core::SessionId session_ = 0;
};

class SchedulerService::WatchReactor final : public Stream<v1::Event> {
 public:
  WatchReactor(SchedulerService *service, grpc::ServerContextBase *context, std::string user)
      : Stream(context), service_(service), user_(std::move(user)) {
    self_.reset(this);
    std::shared_ptr<WatchReactor> me = std::static_pointer_cast<WatchReactor>(self_);
    absl::Status refused;
    service_->Locked([&] {
      refused = service_->user_counts_.AdmitWatcher(user_);
      if (!refused.ok()) return;
      service_->user_counts_.WatcherOpened(user_);
      service_->watchers_.insert(me);
      admitted_ = true;
    });
    if (!refused.ok()) RequestFinish(refused);
  }
  void OnCancel() override { RequestFinish(CancelledCall()); }
  void OnDone() override {
    std::shared_ptr<WatchReactor> me = std::static_pointer_cast<WatchReactor>(self_);
    service_->Locked([&] {
      if (!admitted_) return;
      service_->watchers_.erase(me);
      service_->user_counts_.WatcherClosed(user_);
    });
    self_.reset();
  }

 private:
  SchedulerService *service_;
  const std::string user_;
  bool admitted_ = false;
};

void SchedulerService::EndStreamAfterUnlock(const SessionRecord &record, absl::Status status) {
  if (std::shared_ptr<AttachReactor> stream = record.stream.lock()) {
    after_unlock_.push_back([stream, status] { stream->RequestFinish(status); });
  }
}

void SchedulerService::NotifyWatchers(const core::Event &event) {
  if (watchers_.empty()) return;
  // A session's opening event comes from inside OpenSession, before its record exists.
  auto session = sessions_.find(event.session);
  const int64_t pid = session != sessions_.end() ? session->second.pid : opening_pid_;
  const v1::Event message = ToProto(event, pid);
  for (const std::shared_ptr<WatchReactor> &w : watchers_) {
    if (w->Push(message)) {
      after_unlock_.push_back([w] { w->Kick(); });
    } else {
      after_unlock_.push_back([w] {
        w->RequestFinish(
            core::Refusal(core::ErrorReason::kWatcherBehind, "watcher fell too far behind"));
      });
    }
  }
}

// ---- RPCs -----------------------------------------------------------------------------------

grpc::ServerWriteReactor<v1::SessionEvent> *SchedulerService::Attach(
    grpc::CallbackServerContext *context, const v1::AttachRequest *request) {
  v1::AttachRequest attach = *request;
  std::string user;
  uint64_t job = 0;
  absl::Status admitted;
  if (service_options_.peer) {
    if (std::optional<PeerIdentity> peer = service_options_.peer(context->peer())) {
      if (peer->pid != attach.pid() && service_options_.verbosity >= 1) {
        std::fprintf(stderr, "mgbd: a client claimed pid %lld; its connection is from pid %lld\n",
                     static_cast<long long>(attach.pid()), static_cast<long long>(peer->pid));
      }
      attach.set_pid(peer->pid);
      user = UserName(peer->uid);  // the same as PeerUser's
      // Read from /proc before the lock: the process cannot change which job it is in.
      if (service_options_.job_of) job = service_options_.job_of(peer->pid).value_or(0);
      // Under --slurm a user's process in no job would hold memory past every grant (one that
      // left its job's process tree, or the walk's depth): only root and mgbd's own user may.
      if (service_options_.job_of && job == 0 && !service_options_.slurm_outside_jobs &&
          peer->uid != 0 && peer->uid != service_options_.hook_uid) {
        admitted = core::Refusal(
            core::ErrorReason::kNoJobGrant,
            absl::StrCat("pid ", peer->pid, " (", user,
                         ") is in no Slurm job; mgbd --slurm places only jobs' processes "
                         "(--slurm-outside-jobs lets others in)"));
      }
    }
  }
  return new AttachReactor(this, context, attach, user, job, std::move(admitted));
}

std::string SchedulerService::PeerUser(grpc::CallbackServerContext *context) const {
  if (!service_options_.peer) return "";
  std::optional<PeerIdentity> peer = service_options_.peer(context->peer());
  return peer ? UserName(peer->uid) : "";
}

grpc::ServerWriteReactor<v1::Event> *SchedulerService::Watch(grpc::CallbackServerContext *context,
                                                             const v1::WatchRequest *) {
  return new WatchReactor(this, context, PeerUser(context));
}

}  // namespace mgb::server
