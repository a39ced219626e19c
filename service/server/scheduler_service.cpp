#include "scheduler_service.h"

#include <malloc.h>
#include <pwd.h>
#include <sys/random.h>

#include <algorithm>
#include <cstdio>
#include <deque>

#include "absl/strings/str_cat.h"
#include "event_names.h"
#include "mgb/core/byte_size.h"
#include "mgb/core/error_reason.h"
#include "proto_convert.h"
#include "service_calls.h"

namespace mgb::server {

// The core's time line in mgbd: monotonic (steady_clock), anchored at the Unix time mgbd started,
// so events, `since` times and clients' Unix deadlines still read as Unix time, while a step of
// the wall clock after start (NTP, an operator) moves no decision, wait or deadline order.
core::Micros CoreNow() {
  using std::chrono::duration_cast;
  using std::chrono::microseconds;
  static const auto steady_start = std::chrono::steady_clock::now();
  static const core::Micros unix_start =
      duration_cast<microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return unix_start +
         duration_cast<microseconds>(std::chrono::steady_clock::now() - steady_start).count();
}

namespace {

// 128 random bits from the kernel, as 32 hex digits: the secret that names a session.
std::string RandomSessionKey() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
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
                const v1::AttachRequest &request, const std::string &user, uint64_t job)
      : Stream(context), service_(service), key_(RandomSessionKey()) {
    self_.reset(this);
    std::weak_ptr<AttachReactor> me = std::static_pointer_cast<AttachReactor>(self_);
    v1::SessionEvent event;
    absl::Status refused;
    const ClientLimits &limits = service_->service_options_.limits;
    service_->Locked([&] {
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
        core::TaskRequest task;
        task.memory_bytes = held.memory_bytes();
        task.shape = FromProto(held.shape());
        task.label = CappedText(held.label(), limits.label_bytes);
        // No GPU (-1) is refused like one past the inventory.
        const int gpu = held.has_gpu_index() ? static_cast<int>(held.gpu_index()) : -1;
        absl::StatusOr<core::TaskId> restored =
            service_->core_->RestoreTask(id, gpu, task, CoreNow());
        if (!restored.ok()) {
          std::fprintf(stderr, "mgbd: pid %lld could not restore a task: %s\n",
                       static_cast<long long>(request.pid()),
                       std::string(restored.status().message()).c_str());
        } else {
          service_->user_counts_.TaskAdded(*restored, user, false);
          // In use already: counted against the job's grant whatever it says.
          if (job != 0) service_->job_grants_.Charge(job, *restored, held.memory_bytes());
        }
        info->add_restored_task_ids(restored.ok() ? *restored : 0);
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

// ---- parked unary calls ---------------------------------------------------------------------

// TaskBegin and TaskGrow: finished at once, or parked until the core's event finishes them.
class SchedulerService::WaitReactor final : public grpc::ServerUnaryReactor, public PendingCall {
 public:
  WaitReactor(SchedulerService *service, grpc::CallbackServerContext *context, bool is_grow)
      : service_(service), context_(context), is_grow_(is_grow) {}

  void Begin(const v1::TaskBeginRequest &request, v1::TaskBeginReply *reply) {
    begin_reply_ = reply;
    std::optional<absl::Status> done;
    service_->Locked([&] { done = service_->BeginLocked(request, this, nullptr); });
    if (done) Complete(*done);
  }

  void Grow(const v1::TaskGrowRequest &request, v1::TaskGrowReply *reply) {
    std::optional<absl::Status> done;
    service_->Locked([&] {
      absl::StatusOr<core::SessionId> found = service_->FindSession(request.session_id());
      if (!found.ok()) return done.emplace(found.status()), void();
      if (absl::Status st = CheckDeadline(request.deadline_unix_ms()); !st.ok()) {
        return done.emplace(st), void();
      }
      const core::Micros now = CoreNow();
      service_->RefreshMemory(now, false);
      const uint64_t job = service_->sessions_.at(*found).job;
      if (absl::Status st =
              service_->CheckJobGrant(job, request.extra_bytes(),
                                      absl::StrCat("growing task ", request.task_id(), " by ",
                                                   core::FormatBytes(request.extra_bytes())));
          !st.ok()) {
        return done.emplace(st), void();
      }
      absl::StatusOr<core::GrowResult> result =
          service_->core_->TaskGrow(*found, request.task_id(), request.extra_bytes(),
                                    DeadlineFromUnixMs(request.deadline_unix_ms()), now);
      if (!result.ok()) return done.emplace(result.status()), void();
      if (job != 0) service_->job_grants_.Charge(job, request.task_id(), request.extra_bytes());
      session = *found;
      task = request.task_id();
      grow_reply_ = reply;
      if (result->grown) {
        reply->set_memory_bytes(result->memory_bytes);
        done.emplace(absl::OkStatus());
      } else {
        service_->parked_grows_[task] = this;
        service_->timer_wake_.notify_one();
      }
    });
    if (done) Complete(*done);
  }

  // Under mu_: the core placed / grew this call's task.
  void Placed(int gpu, const core::GpuSpec &spec) override {
    FillPlacement(begin_reply_, task, gpu, spec, memory_bytes);
  }
  void FillGrown(uint64_t grown_to) { grow_reply_->set_memory_bytes(grown_to); }
  void Complete(const absl::Status &status) override { Finish(ToGrpc(status, context_)); }

  void OnCancel() override {
    service_->Locked([&] {
      bool parked = false;
      if (is_grow_) {
        auto it = service_->parked_grows_.find(task);
        parked = it != service_->parked_grows_.end() && it->second == this;
      } else {
        auto it = service_->parked_begins_.find(task);
        parked = it != service_->parked_begins_.end() && it->second.call == this;
      }
      if (!parked) return;
      const bool expired = context_->deadline() <= std::chrono::system_clock::now();
      // Emits kTaskCancelled, whose handler unparks and finishes this call.
      (void)service_->core_->CancelWaiting(
          session, task, is_grow_,
          expired ? core::CancelReason::kDeadline : core::CancelReason::kCancelled, CoreNow());
    });
  }
  void OnDone() override { delete this; }

 private:
  SchedulerService *service_;
  grpc::CallbackServerContext *context_;
  bool is_grow_;
  v1::TaskBeginReply *begin_reply_ = nullptr;
  v1::TaskGrowReply *grow_reply_ = nullptr;
};

// ---- the service ----------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<SchedulerService>> SchedulerService::Create(
    std::vector<core::GpuSpec> gpus, core::Options options, ServiceOptions service_options) {
  for (const core::GpuSpec &g : gpus) {
    if (g.has_nvml && service_options.memory_probe == nullptr) {
      return absl::InvalidArgumentError("NVML GPUs need a memory probe");
    }
  }
  if (service_options.profiles == nullptr)
    service_options.profiles = std::make_shared<ProfileStore>("");
  std::unique_ptr<SchedulerService> service(
      new SchedulerService(options, std::move(service_options)));
  absl::StatusOr<std::unique_ptr<core::Scheduler>> core =
      core::Scheduler::Create(std::move(gpus), std::move(options), service.get());
  if (!core.ok()) return core.status();
  service->core_ = std::move(*core);
  service->RefreshMemory(CoreNow(), true);
  for (const auto &[job, bytes] : service->service_options_.job_grants) {
    service->job_grants_.Grant(job, bytes);
  }
  service->timer_ = std::thread([s = service.get()] { s->TimerLoop(); });
  return service;
}

SchedulerService::SchedulerService(core::Options /*options*/, ServiceOptions service_options)
    : service_options_(std::move(service_options)), user_counts_(service_options_.limits) {}

SchedulerService::~SchedulerService() { Stop(); }

void SchedulerService::HoldNewTasks(std::chrono::milliseconds how_long) {
  Locked([&] {
    core_->HoldNewTasksUntil(CoreNow() + how_long.count() * 1000);
    timer_wake_.notify_one();
  });
}

size_t SchedulerService::SessionCount() {
  size_t count = 0;
  Locked([&] { count = sessions_.size(); });
  return count;
}

void SchedulerService::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  timer_wake_.notify_all();
  if (timer_.joinable()) timer_.join();
}

void SchedulerService::EndStreamAfterUnlock(const SessionRecord &record, absl::Status status) {
  if (std::shared_ptr<AttachReactor> stream = record.stream.lock()) {
    after_unlock_.push_back([stream, status] { stream->RequestFinish(status); });
  }
}

absl::StatusOr<core::SessionId> SchedulerService::FindSession(const std::string &key) const {
  auto it = sessions_by_key_.find(key);
  if (it == sessions_by_key_.end()) {
    return core::Refusal(core::ErrorReason::kUnknownSession,
                         key.empty() ? "session_id is empty: Attach first"
                                     : "session_id: no such session (ended, or never opened)");
  }
  return it->second;
}

void SchedulerService::RefreshMemory(core::Micros now, bool force) {
  if (service_options_.memory_probe == nullptr) return;
  const core::Micros interval =
      std::chrono::duration_cast<std::chrono::microseconds>(service_options_.memory_refresh)
          .count();
  if (!force && now - last_refresh_ < interval) return;
  last_refresh_ = now;
  for (int g = 0; g < core_->gpu_count(); ++g) {
    if (!core_->gpu(g).has_nvml) continue;
    absl::StatusOr<nvml::DeviceMemory> m = service_options_.memory_probe->Memory(g);
    // An NVML read failure keeps the last values: the capacity term still bounds grants.
    if (m.ok()) core_->UpdateDeviceMemory(g, m->free_bytes, m->used_bytes, now);
  }
}

void SchedulerService::OnEvent(const core::Event &event) {
  if (service_options_.verbosity >= 1) Log(event);
  counters_.Record(event);
  switch (event.kind) {
    case core::EventKind::kTaskPlaced:
      user_counts_.TaskPlaced(event.task);
      if (auto it = parked_begins_.find(event.task); it != parked_begins_.end()) {
        PendingCall *call = it->second.call;
        parked_begins_.erase(it);
        call->Placed(event.gpu, core_->gpu(event.gpu));
        after_unlock_.push_back([call] { call->Complete(absl::OkStatus()); });
      }
      break;
    case core::EventKind::kTaskGrown:
      if (auto it = parked_grows_.find(event.task); it != parked_grows_.end()) {
        WaitReactor *r = it->second;
        parked_grows_.erase(it);
        r->FillGrown(event.memory_bytes);
        after_unlock_.push_back([r] { r->Finish(grpc::Status::OK); });
      }
      break;
    case core::EventKind::kTaskEnded:
      user_counts_.TaskGone(event.task);
      task_profiles_.erase(event.task);
      job_grants_.Release(event.task);
      break;
    case core::EventKind::kTaskCancelled:
      if (event.is_grow) {
        job_grants_.Refund(event.task, event.grow_bytes);
        if (auto it = parked_grows_.find(event.task); it != parked_grows_.end()) {
          WaitReactor *r = it->second;
          parked_grows_.erase(it);
          after_unlock_.push_back([r, s = core_->CancelStatus(event)] { r->Complete(s); });
        }
        break;
      }
      user_counts_.TaskGone(event.task);
      task_profiles_.erase(event.task);
      job_grants_.Release(event.task);
      if (auto it = parked_begins_.find(event.task); it != parked_begins_.end()) {
        PendingCall *call = it->second.call;
        parked_begins_.erase(it);
        after_unlock_.push_back([call, s = core_->CancelStatus(event)] { call->Complete(s); });
      }
      break;
    default: break;
  }
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

void SchedulerService::Log(const core::Event &e) const {
  // The event's own time (Unix seconds) lets a run's decisions be lined up with its jobs' logs;
  // kinds are named as `mgb watch` names them.
  std::fprintf(stderr,
               "mgbd: %.3f %s%s session s%llu task %llu gpu %d memory %llu warps %llu grow_bytes "
               "%llu reason %s\n",
               static_cast<double>(e.time) / 1e6, EventKindName(KindOf(e.kind)).c_str(),
               e.is_grow ? " (grow)" : "", static_cast<unsigned long long>(e.session),
               static_cast<unsigned long long>(e.task), e.gpu,
               static_cast<unsigned long long>(e.memory_bytes),
               static_cast<unsigned long long>(e.warps),
               static_cast<unsigned long long>(e.grow_bytes), core::CancelReasonName(e.reason));
}

// Waiting tasks and waiting grows both depend on NVML's view: it is re-read while either waits.
bool SchedulerService::PollsMemory() const {
  return service_options_.memory_probe != nullptr &&
         core_->waiting_count() + core_->growing_count() > 0;
}

void SchedulerService::TimerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const core::Micros now = CoreNow();
    core::Micros wake = now + 1'000'000;
    if (std::optional<core::Micros> d = core_->NextDeadline()) wake = std::min(wake, *d);
    if (PollsMemory()) {
      wake = std::min<core::Micros>(
          wake,
          now + std::chrono::duration_cast<std::chrono::microseconds>(service_options_.waiting_poll)
                    .count());
    }
    if (wake > now) timer_wake_.wait_for(lock, std::chrono::microseconds(wake - now));
    if (stopping_) break;
    const core::Micros later = CoreNow();
    core_->ExpireDeadlines(later);
    if (PollsMemory()) RefreshMemory(later, false);
    std::vector<std::function<void()>> actions;
    actions.swap(after_unlock_);
    if (!actions.empty()) {
      lock.unlock();
      for (auto &action : actions) action();
      lock.lock();
    }
  }
}

// ---- RPCs -----------------------------------------------------------------------------------

grpc::ServerWriteReactor<v1::SessionEvent> *SchedulerService::Attach(
    grpc::CallbackServerContext *context, const v1::AttachRequest *request) {
  v1::AttachRequest attach = *request;
  std::string user;
  uint64_t job = 0;
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
    }
  }
  return new AttachReactor(this, context, attach, user, job);
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

grpc::ServerUnaryReactor *SchedulerService::TaskBegin(grpc::CallbackServerContext *context,
                                                      const v1::TaskBeginRequest *request,
                                                      v1::TaskBeginReply *reply) {
  auto *r = new WaitReactor(this, context, /*is_grow=*/false);
  r->Begin(*request, reply);
  return r;
}

grpc::ServerUnaryReactor *SchedulerService::TaskGrow(grpc::CallbackServerContext *context,
                                                     const v1::TaskGrowRequest *request,
                                                     v1::TaskGrowReply *reply) {
  auto *r = new WaitReactor(this, context, /*is_grow=*/true);
  r->Grow(*request, reply);
  return r;
}

template <typename Call>
grpc::ServerUnaryReactor *SchedulerService::AnswerForSession(grpc::CallbackServerContext *context,
                                                             const std::string &session_id,
                                                             Call &&call) {
  absl::Status status;
  Locked([&] {
    absl::StatusOr<core::SessionId> session = FindSession(session_id);
    status = session.ok() ? call(*session) : session.status();
  });
  return AnswerNow(context, status);
}

grpc::ServerUnaryReactor *SchedulerService::TaskUsage(grpc::CallbackServerContext *context,
                                                      const v1::TaskUsageRequest *request,
                                                      v1::TaskUsageReply * /*reply*/) {
  return AnswerForSession(context, request->session_id(), [&](core::SessionId session) {
    const core::Micros now = CoreNow();
    absl::Status status =
        core_->TaskUsage(session, request->task_id(), request->allocated_bytes(), now);
    if (!status.ok()) return status;
    uint64_t &peak = task_profiles_[request->task_id()].peak;
    peak = std::max({peak, request->allocated_bytes(), request->peak_bytes()});
    // The allocation is in NVML's view now: re-read it before any other decision.
    RefreshMemory(now, true);
    return status;
  });
}

grpc::ServerUnaryReactor *SchedulerService::TaskLaunch(grpc::CallbackServerContext *context,
                                                       const v1::TaskLaunchRequest *request,
                                                       v1::TaskLaunchReply *reply) {
  return AnswerForSession(context, request->session_id(), [&](core::SessionId session) {
    absl::StatusOr<uint64_t> warps =
        core_->TaskLaunch(session, request->task_id(), FromProto(request->shape()));
    if (!warps.ok()) return warps.status();
    reply->set_warps(*warps);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor *SchedulerService::TaskEnd(grpc::CallbackServerContext *context,
                                                    const v1::TaskEndRequest *request,
                                                    v1::TaskEndReply * /*reply*/) {
  absl::Status status;
  Locked([&] { status = EndLocked(*request); });
  return AnswerNow(context, status);
}

// ---- decisions, for gRPC and the fast lane ----------------------------------------------------

std::optional<absl::Status> SchedulerService::BeginLocked(const v1::TaskBeginRequest &request,
                                                          PendingCall *call,
                                                          const void *lane_owner) {
  absl::StatusOr<core::SessionId> session = FindSession(request.session_id());
  if (!session.ok()) return session.status();
  if (absl::Status st = CheckDeadline(request.deadline_unix_ms()); !st.ok()) return st;
  const core::Micros now = CoreNow();
  RefreshMemory(now, false);
  core::TaskRequest task = FromProto(request);
  task.label = CappedText(task.label, service_options_.limits.label_bytes);
  const std::string &user = sessions_.at(*session).user;
  const uint64_t job = sessions_.at(*session).job;
  if (absl::Status st = user_counts_.AdmitTask(user); !st.ok()) return st;
  const std::string profile_key =
      CappedText(request.profile_key(), service_options_.limits.profile_key_bytes);
  if (task.memory_bytes == 0 && !profile_key.empty()) {
    task.memory_bytes = ProfiledMemory(user, profile_key);
    // mgbd's guess, not the program's word: within what the job may still reserve.
    if (job != 0) task.memory_bytes = std::min(task.memory_bytes, job_grants_.Remaining(job));
  }
  if (absl::Status st = CheckJobGrant(job, task.memory_bytes,
                                      "a task of " + core::FormatBytes(task.memory_bytes));
      !st.ok()) {
    return st;
  }
  absl::StatusOr<core::BeginResult> result = core_->TaskBegin(*session, task, now);
  if (!result.ok()) return result.status();
  if (result->gpu < 0) {
    if (absl::Status st = user_counts_.AdmitWaiting(user); !st.ok()) {
      (void)core_->CancelWaiting(*session, result->task, false, core::CancelReason::kCancelled,
                                 now);
      return st;
    }
  }
  user_counts_.TaskAdded(result->task, user, result->gpu < 0);
  if (job != 0) job_grants_.Charge(job, result->task, task.memory_bytes);
  call->session = *session;
  call->task = result->task;
  call->memory_bytes = task.memory_bytes;
  if (!profile_key.empty()) {
    task_profiles_[result->task] = TaskProfile{user, profile_key, 0};
  }
  if (result->gpu >= 0) {
    call->Placed(result->gpu, core_->gpu(result->gpu));
    return absl::OkStatus();
  }
  parked_begins_[result->task] = ParkedBegin{call, lane_owner};
  timer_wake_.notify_one();  // a new deadline, or NVML polling to start
  return std::nullopt;
}

absl::Status SchedulerService::EndLocked(const v1::TaskEndRequest &request) {
  absl::StatusOr<core::SessionId> session = FindSession(request.session_id());
  if (!session.ok()) return session.status();
  // Copied first: the task's end drops its entry (OnEvent).
  std::optional<TaskProfile> profile;
  if (auto it = task_profiles_.find(request.task_id()); it != task_profiles_.end()) {
    profile = it->second;
  }
  absl::Status status = core_->TaskEnd(*session, request.task_id(), CoreNow());
  // A run that never reported memory (or ended while waiting) teaches nothing.
  if (status.ok() && profile && !profile->profile_key.empty() && profile->peak > 0) {
    service_options_.profiles->Record(profile->user, profile->profile_key, profile->peak);
    after_unlock_.push_back([this] { SaveProfiles(); });
  }
  return status;
}

uint64_t SchedulerService::ProfiledMemory(const std::string &user,
                                          const std::string &profile_key) const {
  uint64_t memory = service_options_.run_default_memory;
  if (std::optional<uint64_t> peak = service_options_.profiles->Lookup(user, profile_key)) {
    // 1/16 over the peak: a run that allocates a little more than the last one still fits;
    // whole MiB, at least one. Peaks past 2^62 (not a real GPU) are cut before the arithmetic.
    const uint64_t bounded = std::min<uint64_t>(*peak, uint64_t{1} << 62);
    const uint64_t with_headroom = bounded + bounded / 16;
    memory = std::max((with_headroom + core::kMiB - 1) / core::kMiB * core::kMiB, core::kMiB);
  }
  // Never more than the largest GPU can hold beside a context reserve: the core would refuse the
  // task, when the program probably fits as it did before.
  uint64_t largest = 0;
  for (int g = 0; g < core_->gpu_count(); ++g)
    largest = std::max(largest, core_->gpu(g).memory_bytes);
  const uint64_t reserve =
      core_->policy().kind == core::PolicyKind::kCoreToGpu ? 0 : core_->context_reserve_bytes();
  return std::min(memory, largest > reserve ? largest - reserve : 0);
}

void SchedulerService::SaveProfiles() {
  WarnUnlessSaved(service_options_.profiles->Save(), profile_save_failing_, "learned peaks");
}

void SchedulerService::BeginFromLane(const v1::TaskBeginRequest &request, PendingCall *call,
                                     const void *owner) {
  std::optional<absl::Status> done;
  Locked([&] { done = BeginLocked(request, call, owner); });
  if (done) call->Complete(*done);
}

absl::Status SchedulerService::EndFromLane(const v1::TaskEndRequest &request) {
  absl::Status status;
  Locked([&] { status = EndLocked(request); });
  return status;
}

void SchedulerService::CancelLaneCalls(const void *owner) {
  Locked([&] {
    std::vector<std::pair<core::SessionId, core::TaskId>> waiting;
    for (const auto &[task, parked] : parked_begins_) {
      if (parked.lane_owner == owner) waiting.emplace_back(parked.call->session, task);
    }
    // Each emits kTaskCancelled, whose handler unparks and completes the call.
    for (const auto &[session, task] : waiting) {
      (void)core_->CancelWaiting(session, task, false, core::CancelReason::kCancelled, CoreNow());
    }
  });
}

}  // namespace mgb::server
