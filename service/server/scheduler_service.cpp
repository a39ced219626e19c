#include "scheduler_service.h"

#include <algorithm>
#include <cstdio>

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

namespace {}  // namespace

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
        FillGrown(result->memory_bytes,
                  service_->TokenFor(session, task, result->gpu, result->memory_bytes));
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
    FillPlacement(begin_reply_, task, gpu, spec, memory_bytes, restore_token);
  }
  void FillGrown(uint64_t grown_to, std::string token) {
    grow_reply_->set_memory_bytes(grown_to);
    grow_reply_->set_restore_token(std::move(token));
  }
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
  if (service_options.restore_tokens == nullptr) {
    service_options.restore_tokens =
        std::make_shared<RestoreTokens>(RestoreTokens::Open("", nullptr));
  }
  std::unique_ptr<SchedulerService> service(
      new SchedulerService(options, std::move(service_options)));
  absl::StatusOr<std::unique_ptr<core::Scheduler>> core =
      core::Scheduler::Create(std::move(gpus), std::move(options), service.get());
  if (!core.ok()) return core.status();
  service->core_ = std::move(*core);
  service->RefreshMemory(CoreNow(), true);
  service->restore_until_ = CoreNow() + std::chrono::duration_cast<std::chrono::microseconds>(
                                            service->service_options_.restore_window)
                                            .count();
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

absl::StatusOr<core::TaskId> SchedulerService::RestoreLocked(core::SessionId session,
                                                             const v1::RestoredTask &held) {
  const SessionRecord &record = sessions_.at(session);
  const core::Micros now = CoreNow();
  if (now >= restore_until_) {
    return core::Refusal(
        core::ErrorReason::kPermissionDenied,
        absl::StrCat("restore refused: restores come only in the first ",
                     service_options_.restore_window.count(), " ms after mgbd starts"));
  }
  // No GPU (-1) is refused like one past the inventory.
  const int gpu = held.has_gpu_index() ? static_cast<int>(held.gpu_index()) : -1;
  if (absl::Status st = service_options_.restore_tokens->Redeem(held.token(), gpu,
                                                                held.memory_bytes(), record.user);
      !st.ok()) {
    return st;
  }
  if (absl::Status st = CheckJobGrant(record.job, held.memory_bytes(), "a restored task");
      !st.ok()) {
    return st;
  }
  core::TaskRequest task;
  task.memory_bytes = held.memory_bytes();
  task.shape = FromProto(held.shape());
  task.label = CappedText(held.label(), service_options_.limits.label_bytes);
  absl::StatusOr<core::TaskId> restored = core_->RestoreTask(session, gpu, task, now);
  if (!restored.ok()) return restored.status();
  user_counts_.TaskAdded(*restored, record.user, false);
  if (record.job != 0) job_grants_.Charge(record.job, *restored, held.memory_bytes());
  return restored;
}

std::string SchedulerService::TokenFor(core::SessionId session, core::TaskId task, int gpu,
                                       uint64_t bytes) const {
  const auto it = sessions_.find(session);
  return service_options_.restore_tokens->Issue(
      task, gpu, bytes, it != sessions_.end() ? it->second.user : std::string());
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
        call->restore_token = TokenFor(event.session, event.task, event.gpu, call->memory_bytes);
        call->Placed(event.gpu, core_->gpu(event.gpu));
        after_unlock_.push_back([call] { call->Complete(absl::OkStatus()); });
      }
      break;
    case core::EventKind::kTaskGrown:
      if (auto it = parked_grows_.find(event.task); it != parked_grows_.end()) {
        WaitReactor *r = it->second;
        parked_grows_.erase(it);
        r->FillGrown(event.memory_bytes,
                     TokenFor(event.session, event.task, event.gpu, event.memory_bytes));
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
  NotifyWatchers(event);
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
                                                      v1::TaskUsageReply *reply) {
  return AnswerForSession(context, request->session_id(), [&](core::SessionId session) {
    const core::Micros now = CoreNow();
    absl::StatusOr<bool> changed =
        core_->TaskUsage(session, request->task_id(), request->allocated_bytes(), now);
    if (!changed.ok()) return changed.status();
    TaskProfile &profile = task_profiles_[request->task_id()];
    profile.peak = std::max({profile.peak, request->allocated_bytes(), request->peak_bytes()});
    LearnWhileRunning(profile);
    // A new allocation is in NVML's view now: re-read it before any other decision (a report
    // that changed nothing, `mgb run`'s every 2 s, needs no read).
    RefreshMemory(now, *changed);
    if (absl::StatusOr<uint64_t> room = core_->TaskRoom(session, request->task_id()); room.ok()) {
      reply->set_room_bytes(*room);
    }
    return absl::OkStatus();
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
  task.owner = user;  // launch shapes are learned per user (site_shapes.h)
  const uint64_t job = sessions_.at(*session).job;
  if (absl::Status st = user_counts_.AdmitTask(user); !st.ok()) return st;
  const std::string profile_key =
      CappedText(request.profile_key(), service_options_.limits.profile_key_bytes);
  const std::string arguments =
      CappedText(request.profile_arguments(), service_options_.limits.profile_key_bytes);
  bool guessed = false;
  if (task.memory_bytes == 0 && !profile_key.empty()) {
    task.memory_bytes = ProfiledMemory(user, profile_key, arguments, &guessed, &task.provisional);
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
    task_profiles_[result->task] = TaskProfile{user, profile_key, arguments, 0, 0, guessed};
  }
  if (result->gpu >= 0) {
    call->restore_token = TokenFor(*session, result->task, result->gpu, task.memory_bytes);
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
    service_options_.profiles->Record(profile->user, profile->profile_key, profile->arguments,
                                      profile->peak);
    after_unlock_.push_back([this] { SaveProfiles(); });
  }
  return status;
}

uint64_t SchedulerService::ProfiledMemory(const std::string &user, const std::string &profile_key,
                                          const std::string &arguments, bool *guessed,
                                          bool *unknown) const {
  uint64_t memory = service_options_.run_default_memory;
  const auto learned = service_options_.profiles->Lookup(user, profile_key, arguments);
  *guessed = !learned || !learned->exact;
  *unknown = !learned;
  if (learned) {
    // 1/16 over the peak: a run that allocates a little more than the last one still fits;
    // whole MiB, at least one. Peaks past 2^62 (not a real GPU) are cut before the arithmetic.
    const uint64_t bounded = std::min<uint64_t>(learned->peak, uint64_t{1} << 62);
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

void SchedulerService::LearnWhileRunning(TaskProfile &profile) {
  if (profile.profile_key.empty() || profile.peak <= profile.recorded + profile.recorded / 16) {
    return;
  }
  service_options_.profiles->Record(profile.user, profile.profile_key, profile.arguments,
                                    profile.peak, ProfileStore::Merge::kRaise);
  profile.recorded = profile.peak;
  after_unlock_.push_back([this] { SaveProfiles(); });
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
