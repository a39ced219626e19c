// One simulated node, advanced one event at a time by whoever owns the clock: Simulate() for a
// single node (simulator.h), the cluster's event loop for many (cluster_simulator.h). Jobs are
// added, arrive (are queued for a worker slot), run their host phases and GPU tasks under the REAL
// scheduling core, and end; the owner learns of each end through TakeFinished().
#ifndef MGB_TOOLS_SIM_NODE_SIMULATION_H
#define MGB_TOOLS_SIM_NODE_SIMULATION_H

#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "job_profile.h"
#include "mgb/core/scheduler.h"
#include "simulator.h"

namespace mgb::sim {

class NodeSimulation : public core::EventSink {
 public:
  // `options` must outlive the node.
  explicit NodeSimulation(const SimOptions &options);

  // Creates the core (fails as core::Scheduler::Create does).
  absl::Status Start();

  // Registers a job (not yet arrived) and returns its index on this node. The profile must outlive
  // the node; `pid` is what the core's session is opened with.
  size_t AddJob(const JobProfile &profile, int64_t pid);
  // The job is queued for a worker slot at `now` (never earlier than the last event handled).
  void Arrive(size_t job, double now);

  bool HasEvents() const { return !events_.empty(); }
  // Time of the earliest pending event; +infinity when there is none.
  double NextEventTime() const {
    return events_.empty() ? std::numeric_limits<double>::infinity() : events_.top().time;
  }
  // Handles the earliest pending event.
  void Step();

  // Jobs (node indices) that ended (completed, died or were refused) since the last call.
  std::vector<size_t> TakeFinished();
  double last_end() const { return last_end_; }

  // The run's result, its utilisation integrated up to `makespan` (>= every job's end). Moves the
  // job records out: call once, at the end.
  SimResult Finish(double makespan);

  void OnEvent(const core::Event &event) override { core_events_.push_back(event); }

 private:
  enum class Phase { kNotArrived, kReady, kHost, kQueued, kRunning, kGrowing, kDone };

  struct JobState {
    const JobProfile *profile = nullptr;
    int64_t pid = 0;
    Phase phase = Phase::kNotArrived;
    size_t task_index = 0;  // the task being waited for, run, or the next one
    core::SessionId session = 0;
    core::TaskId task = 0;
    int gpu = -1;
    double progress = 0.0;      // of the current task, 0..1
    double target = 0.0;        // progress at the next milestone (memory step or end)
    double stepped_to = -1.0;   // the last memory step applied (its progress point)
    double rate = 0.0;          // solo seconds per second
    double kernel_share = 0.0;  // share of wall time its kernels run: busy * stretch * rate
    double occupancy = 0.0;
    uint64_t reserved = 0;          // the core's reservation for the current task
    uint64_t used = 0;              // real bytes the current task holds
    uint64_t pending_bytes = 0;     // usage waiting for a grow
    uint64_t version = 0;           // invalidates milestone events when rates change
    double queued_at = 0.0;         // TaskBegin time of the current task
    std::vector<bool> has_context;  // per GPU: the process created a CUDA context there
  };

  struct GpuState {
    std::vector<size_t> resident;  // jobs with a task on this GPU (running or waiting to grow)
    uint64_t used = 0;             // real bytes: task memory plus contexts
    double last_settled = 0.0;
    struct Point {
      double t;
      double sm_busy;
      uint64_t used;
    };
    std::vector<Point> history;
  };

  enum class EventType { kHostDone, kMilestone };

  struct Event {
    double time;
    uint64_t seq;
    EventType type;
    size_t job;
    uint64_t version;
    bool operator>(const Event &o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };

  const TaskProfile &CurrentTask(size_t j) const {
    return jobs_[j].profile->tasks[jobs_[j].task_index];
  }
  void Push(double time, EventType type, size_t job, uint64_t version = 0) {
    events_.push(Event{time, next_seq_++, type, job, version});
  }
  void StartReadyJobs();
  void StartJob(size_t j);
  void HostDone(size_t j);
  void BeginTask(size_t j);
  void OnPlaced(size_t j, int gpu);
  void OnGrown(size_t j, uint64_t reservation);
  void Milestone(size_t j);
  void EndTask(size_t j);
  void FinishJob(size_t j, JobOutcome outcome, const std::string &error);
  // Real allocation of `bytes` more on the job's GPU; false (and the job is dead) on OOM.
  bool Allocate(size_t j, uint64_t bytes, const char *what);
  void ApplyUsage(size_t j, uint64_t bytes);
  void Settle(int gpu);
  void Reschedule(int gpu);
  void DrainCoreEvents();
  size_t JobOfSession(core::SessionId session) const;
  void Finalise(SimResult &result, double makespan) const;

  const SimOptions &options_;
  std::unique_ptr<core::Scheduler> core_;
  std::vector<JobState> jobs_;
  std::vector<JobRecord> records_;
  std::vector<GpuState> gpus_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  std::vector<core::Event> core_events_;
  std::unordered_map<core::SessionId, size_t> session_job_;
  std::deque<size_t> ready_;      // arrived, waiting for a worker slot
  std::vector<size_t> finished_;  // ended since the last TakeFinished
  uint32_t busy_workers_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t handled_ = 0;
  double now_ = 0.0;
  double last_end_ = 0.0;
};

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_NODE_SIMULATION_H
