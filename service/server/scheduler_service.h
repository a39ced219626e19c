// SchedulerService: the gRPC face of one core::Scheduler, guarded by one mutex.
//
// Calls that must wait (TaskBegin, TaskGrow) park their reactor and return; the core's
// kTaskPlaced / kTaskGrown / kTaskCancelled events finish it later. gRPC reactions may run
// inline inside Finish/StartWrite, so nothing here calls them while holding mu_: work done under
// the lock queues "after unlock" actions that Locked() runs once the lock is released.
#ifndef MGB_SERVICE_SERVER_SCHEDULER_SERVICE_H
#define MGB_SERVICE_SERVER_SCHEDULER_SERVICE_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "client_limits.h"
#include "mgb.grpc.pb.h"
#include "mgb/core/job_grants.h"
#include "mgb/core/scheduler.h"
#include "nvml.h"
#include "job_grant_file.h"
#include "profile_store.h"
#include "restore_tokens.h"
#include "scheduler_counters.h"

namespace mgb::server {

// Where NVML GPUs' free/used memory comes from (NVML in mgbd, a fake in tests).
class MemoryProbe {
 public:
  virtual ~MemoryProbe() = default;
  virtual absl::StatusOr<nvml::DeviceMemory> Memory(uint32_t gpu_index) = 0;
};

// Who is at the other end of a connection, as the kernel says (SO_PEERCRED).
struct PeerIdentity {
  int64_t pid = 0;
  uint32_t uid = 0;
};

struct ServiceOptions {
  std::string mps_pipe_directory;               // handed to clients in SessionInfo
  int verbosity = 0;                            // >= 1: one stderr line per scheduling decision
  MemoryProbe *memory_probe = nullptr;          // needed when a GPU has NVML
  std::chrono::milliseconds memory_refresh{5};  // NVML read at most this often per decision
  std::chrono::milliseconds waiting_poll{20};   // re-read NVML this often while tasks wait
  // The kernel's pid and uid for a gRPC peer string, when known (mgbd's ConnectionListener): a
  // session takes the pid over the one its client claims (which may be forged, or from another
  // pid namespace), and Status names its user.
  std::function<std::optional<PeerIdentity>(const std::string &grpc_peer)> peer;
  // Learned peaks (docs/service.md, "Learned peaks"): a TaskBegin with memory_bytes 0 and a
  // profile_key reserves its user's last peak for it, else run_default_memory. Null: an empty
  // store in memory.
  std::shared_ptr<ProfileStore> profiles;
  uint64_t run_default_memory = uint64_t{1} << 30;
  // Slurm (mgbd --slurm, docs/slurm.md): the job a process belongs to, or none. Null: no session
  // belongs to a job, and JobBegin / JobEnd answer FAILED_PRECONDITION.
  std::function<std::optional<uint64_t>(int64_t pid)> job_of;
  // The grants held at start (the file's, after a restart), and where every change is written;
  // "": in memory only.
  JobGrantList job_grants;
  std::string job_grants_file;
  // Besides root, the one uid whose processes may call JobBegin / JobEnd (mgbd's own).
  uint32_t hook_uid = 0;
  // With job_of: whether other users' processes in no job may open sessions (unlimited).
  bool slurm_outside_jobs = false;
  // What one local user may hold (client_limits.h).
  ClientLimits limits;
  // Restores (AttachRequest.restore) need a token of the mgbd before this one and come only in
  // the first restore_window after the start (restore_tokens.h). Null: fresh tokens in memory.
  std::shared_ptr<RestoreTokens> restore_tokens;
  std::chrono::milliseconds restore_window{3000};
};

class SchedulerService final : public v1::Scheduler::CallbackService, private core::EventSink {
 public:
  // A TaskBegin the core may answer later: a gRPC call, or one of the fast lane (fast_lane.h).
  class PendingCall {
   public:
    virtual ~PendingCall() = default;
    // Under mu_: the core placed the task on `gpu`.
    virtual void Placed(int gpu, const core::GpuSpec &spec) = 0;
    // After mu_ is released, exactly once: OK once Placed, else why not.
    virtual void Complete(const absl::Status &status) = 0;

    core::SessionId session = 0;  // set by the service once the core took the request
    core::TaskId task = 0;
    uint64_t memory_bytes = 0;  // the reservation the task begins with (mgbd's choice or asked)
    std::string restore_token;  // set by the service before Placed (restore_tokens.h)
  };

  static absl::StatusOr<std::unique_ptr<SchedulerService>> Create(std::vector<core::GpuSpec> gpus,
                                                                  core::Options options,
                                                                  ServiceOptions service_options);
  ~SchedulerService() override;

  // Stops the timer thread (deadlines, NVML polling). Call after the gRPC server shut down.
  void Stop();
  // After a restart: new tasks wait this long while the old mgbd's clients re-register.
  void HoldNewTasks(std::chrono::milliseconds how_long);
  size_t SessionCount();

  // The fast lane's calls, with the RPCs' meaning. BeginFromLane answers through `call` (at once
  // or once the core decides; `owner` names the lane connection for CancelLaneCalls).
  void BeginFromLane(const v1::TaskBeginRequest &request, PendingCall *call, const void *owner);
  absl::Status EndFromLane(const v1::TaskEndRequest &request);
  // The lane connection `owner` closed: its waiting TaskBegins are withdrawn (and completed).
  void CancelLaneCalls(const void *owner);

  grpc::ServerWriteReactor<v1::SessionEvent> *Attach(grpc::CallbackServerContext *context,
                                                     const v1::AttachRequest *request) override;
  grpc::ServerUnaryReactor *TaskBegin(grpc::CallbackServerContext *context,
                                      const v1::TaskBeginRequest *request,
                                      v1::TaskBeginReply *reply) override;
  grpc::ServerUnaryReactor *TaskGrow(grpc::CallbackServerContext *context,
                                     const v1::TaskGrowRequest *request,
                                     v1::TaskGrowReply *reply) override;
  grpc::ServerUnaryReactor *TaskUsage(grpc::CallbackServerContext *context,
                                      const v1::TaskUsageRequest *request,
                                      v1::TaskUsageReply *reply) override;
  grpc::ServerUnaryReactor *TaskLaunch(grpc::CallbackServerContext *context,
                                       const v1::TaskLaunchRequest *request,
                                       v1::TaskLaunchReply *reply) override;
  grpc::ServerUnaryReactor *TaskEnd(grpc::CallbackServerContext *context,
                                    const v1::TaskEndRequest *request,
                                    v1::TaskEndReply *reply) override;
  // What Status answers (also for mgbd's metrics endpoint).
  void FillStatus(v1::StatusReply *reply);
  grpc::ServerUnaryReactor *Status(grpc::CallbackServerContext *context,
                                   const v1::StatusRequest *request,
                                   v1::StatusReply *reply) override;
  grpc::ServerWriteReactor<v1::Event> *Watch(grpc::CallbackServerContext *context,
                                             const v1::WatchRequest *request) override;
  grpc::ServerUnaryReactor *JobBegin(grpc::CallbackServerContext *context,
                                     const v1::JobBeginRequest *request,
                                     v1::JobBeginReply *reply) override;
  grpc::ServerUnaryReactor *JobEnd(grpc::CallbackServerContext *context,
                                   const v1::JobEndRequest *request,
                                   v1::JobEndReply *reply) override;

 private:
  class AttachReactor;
  class WaitReactor;
  class WatchReactor;
  template <class Message>
  class Stream;
  struct SessionRecord {
    std::string key;  // the secret session_id
    int64_t pid = 0;
    std::string user;  // from the connection's uid; empty when unknown
    uint64_t job = 0;  // the Slurm job of its process (ServiceOptions::job_of); 0: none
    std::weak_ptr<AttachReactor> stream;  // ended by JobEnd
  };

  SchedulerService(core::Options options, ServiceOptions service_options);

  // Runs fn under mu_, then the actions it queued, without the lock.
  template <class Fn>
  void Locked(Fn &&fn);
  void OnEvent(const core::Event &event) override;  // under mu_
  void NotifyWatchers(const core::Event &event);    // under mu_: queues it on each Watch stream
  absl::StatusOr<core::SessionId> FindSession(const std::string &key) const;
  // The name of the user at the other end of the call; empty when unknown.
  std::string PeerUser(grpc::CallbackServerContext *context) const;
  // Under mu_: the session's Attach stream ends with `status` once mu_ is released.
  void EndStreamAfterUnlock(const SessionRecord &record, absl::Status status);
  // A unary RPC of one session: finds it, runs call(session) -> absl::Status under mu_, and
  // answers at once.
  template <class Call>
  grpc::ServerUnaryReactor *AnswerForSession(grpc::CallbackServerContext *context,
                                             const std::string &session_id, Call &&call);
  void RefreshMemory(core::Micros now, bool force);
  bool PollsMemory() const;  // under mu_
  void TimerLoop();
  void Log(const core::Event &event) const;

  std::mutex mu_;
  std::unique_ptr<core::Scheduler> core_;
  ServiceOptions service_options_;
  std::unordered_map<std::string, core::SessionId> sessions_by_key_;
  std::unordered_map<core::SessionId, SessionRecord> sessions_;
  // Begins the core has not answered: the call, and the lane connection it came on (or null).
  struct ParkedBegin {
    PendingCall *call = nullptr;
    const void *lane_owner = nullptr;
  };
  // Decides a TaskBegin under mu_: the status when answered now, nothing when parked.
  std::optional<absl::Status> BeginLocked(const v1::TaskBeginRequest &request, PendingCall *call,
                                          const void *lane_owner);
  absl::Status EndLocked(const v1::TaskEndRequest &request);
  // Under mu_: the reservation for a TaskBegin of memory 0 with a profile_key (see ServiceOptions).
  // guessed: the reservation is a guess (no finished run with these arguments); unknown: mgbd's
  // default, nothing of the program learned (core::TaskRequest::provisional).
  uint64_t ProfiledMemory(const std::string &user, const std::string &profile_key,
                          const std::string &arguments, bool *guessed, bool *unknown) const;
  // Writes the learned peaks out, after mu_ is released; a failure is printed once until one works.
  void SaveProfiles();
  // The same for the job grants (ServiceOptions::job_grants_file).
  void SaveJobGrants();
  // OK when the call may change job `job_id`'s grant: mgbd runs with --slurm, the caller is root
  // or ServiceOptions::hook_uid by its connection's credentials, and job_id is not 0.
  absl::Status CheckJobCall(grpc::CallbackServerContext *context, uint64_t job_id) const;
  // Under mu_: OK when a reservation of `bytes` more by a session of `job` stays within the job's
  // grant (always for job 0, no job), else why not.
  absl::Status CheckJobGrant(uint64_t job, uint64_t bytes, const std::string &what) const;

  std::unordered_map<core::TaskId, ParkedBegin> parked_begins_;
  std::unordered_map<core::TaskId, WaitReactor *> parked_grows_;
  // What learning a task's peak needs: its user, profile_key and arguments (a profiled
  // TaskBegin) and its peak so far (TaskUsage). Dropped when the task ends or gives up waiting
  // (OnEvent).
  struct TaskProfile {
    std::string user;
    std::string profile_key;
    std::string arguments;
    uint64_t peak = 0;
    uint64_t recorded = 0;     // the peak last written while it runs (learning from the first grow)
    bool provisional = false;  // its reservation was a guess (core::TaskRequest::provisional)
  };
  std::unordered_map<core::TaskId, TaskProfile> task_profiles_;
  // Under mu_, from TaskUsage: keeps a running task's peak in the store once it rose by 1/16 since
  // last kept, so a run that dies (or runs long) teaches the next one.
  void LearnWhileRunning(TaskProfile &profile);
  SchedulerCounters counters_;  // under mu_: fed by OnEvent
  std::atomic<bool> profile_save_failing_{false};
  core::JobGrants job_grants_;      // under mu_
  UserCounts user_counts_;          // under mu_: each user's sessions, tasks and watchers
  core::Micros restore_until_ = 0;  // restores are accepted until then
  // Under mu_: a task the session's process held under the mgbd before this one, restored when
  // its token, the restart window, the GPU's capacity and the session's job grant allow.
  absl::StatusOr<core::TaskId> RestoreLocked(core::SessionId session, const v1::RestoredTask &held);
  // Under mu_: the token for `task` of `session` on `gpu` with `bytes` reserved.
  std::string TokenFor(core::SessionId session, core::TaskId task, int gpu, uint64_t bytes) const;
  std::mutex grants_save_mu_;  // one SaveJobGrants at a time (each writes what is current)
  std::atomic<bool> grants_save_failing_{false};
  std::unordered_set<std::shared_ptr<WatchReactor>> watchers_;
  std::vector<std::function<void()>> after_unlock_;
  core::Micros last_refresh_ = 0;
  int64_t opening_pid_ = 0;  // the pid of the session OpenSession is opening (its event's pid)

  std::condition_variable timer_wake_;
  bool stopping_ = false;
  std::thread timer_;
};

template <class Fn>
void SchedulerService::Locked(Fn &&fn) {
  std::vector<std::function<void()>> actions;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn();
    actions.swap(after_unlock_);
  }
  for (auto &action : actions) action();
}

// The service's time line for the core, in microseconds: monotonic, anchored at the Unix time
// mgbd started (deadlines arrive in Unix ms and are read on it).
core::Micros CoreNow();

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_SCHEDULER_SERVICE_H
