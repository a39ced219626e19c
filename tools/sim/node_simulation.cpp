#include "node_simulation.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace mgb::sim {
namespace {

core::Micros ToMicros(double seconds) {
  return static_cast<core::Micros>(std::llround(seconds * 1e6));
}

}  // namespace

NodeSimulation::NodeSimulation(const SimOptions &options)
    : options_(options), gpus_(options.gpus.size()) {}

absl::Status NodeSimulation::Start() {
  auto core = core::Scheduler::Create(options_.gpus, options_.core, this);
  if (!core.ok()) return core.status();
  core_ = std::move(*core);
  for (int g = 0; g < static_cast<int>(gpus_.size()); ++g)
    gpus_[g].history.push_back({0.0, 0.0, 0});
  return absl::OkStatus();
}

size_t NodeSimulation::AddJob(const JobProfile &profile, int64_t pid) {
  const size_t j = jobs_.size();
  JobState &job = jobs_.emplace_back();
  job.profile = &profile;
  job.pid = pid;
  job.has_context.assign(gpus_.size(), false);
  JobRecord &record = records_.emplace_back();
  record.name = profile.name;
  record.queued_s = profile.arrival_s;
  record.solo_s = profile.SoloSeconds();
  for (const TaskProfile &task : profile.tasks) {
    record.memory_bytes = std::max(record.memory_bytes, task.memory_bytes);
  }
  return j;
}

void NodeSimulation::Arrive(size_t j, double now) {
  ++handled_;
  now_ = now;
  jobs_[j].phase = Phase::kReady;
  ready_.push_back(j);
  StartReadyJobs();
}

void NodeSimulation::Step() {
  const Event e = events_.top();
  events_.pop();
  ++handled_;
  now_ = e.time;
  if (e.type == EventType::kHostDone) {
    HostDone(e.job);
  } else if (e.version == jobs_[e.job].version && jobs_[e.job].phase == Phase::kRunning) {
    Milestone(e.job);
  } else {
    --handled_;  // a stale milestone: rates changed since it was computed
  }
}

std::vector<size_t> NodeSimulation::TakeFinished() {
  std::vector<size_t> out;
  out.swap(finished_);
  return out;
}

SimResult NodeSimulation::Finish(double makespan) {
  SimResult result;
  result.policy = core_->policy().Name();
  result.workers = options_.workers;
  for (const core::GpuSpec &g : options_.gpus) {
    result.gpu_names.push_back(g.name);
    result.gpu_memory_bytes.push_back(g.memory_bytes);
  }
  result.decisions = core_->decisions();
  result.events = handled_;
  result.model_source = options_.model.source;
  Finalise(result, makespan);
  result.jobs = std::move(records_);
  return result;
}

void NodeSimulation::StartReadyJobs() {
  while (!ready_.empty() && (options_.workers == 0 || busy_workers_ < options_.workers)) {
    const size_t j = ready_.front();
    ready_.pop_front();
    ++busy_workers_;
    StartJob(j);
  }
}

void NodeSimulation::StartJob(size_t j) {
  JobState &job = jobs_[j];
  job.session = core_->OpenSession(job.pid, jobs_[j].profile->name, ToMicros(now_));
  session_job_[job.session] = j;
  records_[j].started_s = now_;
  job.phase = Phase::kHost;
  Push(now_ + jobs_[j].profile->tasks[0].host_before_s, EventType::kHostDone, j);
}

void NodeSimulation::HostDone(size_t j) {
  if (jobs_[j].task_index < jobs_[j].profile->tasks.size()) {
    BeginTask(j);
  } else {
    FinishJob(j, JobOutcome::kCompleted, "");
  }
}

void NodeSimulation::BeginTask(size_t j) {
  JobState &job = jobs_[j];
  const TaskProfile &task = CurrentTask(j);
  core::TaskRequest request;
  request.memory_bytes = task.memory_bytes;
  request.shape = task.shape;
  request.label = jobs_[j].profile->name;
  auto begun = core_->TaskBegin(job.session, request, ToMicros(now_));
  if (!begun.ok()) {
    FinishJob(j, JobOutcome::kRejected,
              absl::StrCat("mgbd refused task ", job.task_index, ": ", begun.status().message()));
    return;
  }
  job.task = begun->task;
  job.phase = Phase::kQueued;
  job.queued_at = now_;
  DrainCoreEvents();  // a placement made now arrives as an event like any other
}

void NodeSimulation::DrainCoreEvents() {
  while (!core_events_.empty()) {
    std::vector<core::Event> batch;
    batch.swap(core_events_);
    for (const core::Event &e : batch) {
      const bool failed_grow = e.kind == core::EventKind::kTaskCancelled && e.is_grow;
      if (e.kind != core::EventKind::kTaskPlaced && e.kind != core::EventKind::kTaskGrown &&
          !failed_grow) {
        continue;
      }
      const size_t j = JobOfSession(e.session);
      if (j == SIZE_MAX || jobs_[j].task != e.task) continue;
      if (failed_grow && jobs_[j].phase == Phase::kGrowing) {
        // A waiting growth mgbd gave up on: the allocation fails, the job dies of it.
        FinishJob(j, JobOutcome::kOutOfMemory,
                  absl::StrCat("mgbd gave up growing task ", jobs_[j].task_index, ": ",
                               core_->CancelStatus(e).message()));
        continue;
      }
      if (e.kind == core::EventKind::kTaskPlaced && jobs_[j].phase == Phase::kQueued) {
        OnPlaced(j, e.gpu);
      } else if (e.kind == core::EventKind::kTaskGrown && jobs_[j].phase == Phase::kGrowing) {
        OnGrown(j, e.memory_bytes);
      }
    }
  }
}

size_t NodeSimulation::JobOfSession(core::SessionId session) const {
  auto it = session_job_.find(session);
  return it == session_job_.end() ? SIZE_MAX : it->second;
}

void NodeSimulation::OnPlaced(size_t j, int gpu) {
  JobState &job = jobs_[j];
  const TaskProfile &task = CurrentTask(j);
  records_[j].gpu_wait_s += now_ - job.queued_at;
  records_[j].gpus.push_back(gpu);
  Settle(gpu);
  job.gpu = gpu;
  job.reserved = task.memory_bytes;
  job.used = 0;
  job.progress = 0.0;
  job.stepped_to = 0.0;  // the usage at progress 0 is applied just below
  job.occupancy = Occupancy(task.shape.warps(), options_.gpus[gpu].warp_capacity());
  if (!job.has_context[gpu]) {
    if (!Allocate(j, options_.context_bytes, "creating its CUDA context")) return;
    job.has_context[gpu] = true;
  }
  const uint64_t initial = task.MemoryAt(0.0);
  if (!Allocate(j, initial, "allocating its task memory")) return;
  job.used = initial;
  job.phase = Phase::kRunning;
  gpus_[gpu].resident.push_back(j);
  Reschedule(gpu);
}

bool NodeSimulation::Allocate(size_t j, uint64_t bytes, const char *what) {
  const int gpu = jobs_[j].gpu;
  const uint64_t capacity = options_.gpus[gpu].memory_bytes;
  if (gpus_[gpu].used + bytes > capacity) {
    FinishJob(
        j, JobOutcome::kOutOfMemory,
        absl::StrCat("out of memory on GPU ", gpu, " (", options_.gpus[gpu].name, ") ", what, ": ",
                     bytes, " bytes more with ", gpus_[gpu].used, " of ", capacity, " in use"));
    return false;
  }
  gpus_[gpu].used += bytes;
  return true;
}

void NodeSimulation::Milestone(size_t j) {
  JobState &job = jobs_[j];
  const int gpu = job.gpu;
  Settle(gpu);
  job.progress = job.target;  // exact: the event was computed for this point
  if (job.progress >= 1.0) {
    EndTask(j);
    return;
  }
  job.stepped_to = job.progress;
  ApplyUsage(j, CurrentTask(j).MemoryAt(job.progress));
}

void NodeSimulation::ApplyUsage(size_t j, uint64_t bytes) {
  JobState &job = jobs_[j];
  const int gpu = job.gpu;
  if (bytes <= job.used) {
    gpus_[gpu].used -= job.used - bytes;
    job.used = bytes;
    Reschedule(gpu);
    return;
  }
  if (bytes > job.reserved) {
    // libmgb's guard asks mgbd before the program allocates past its reservation.
    auto grown = core_->TaskGrow(job.session, job.task, bytes - job.reserved, 0, ToMicros(now_));
    if (!grown.ok()) {
      // libmgb returns cudaErrorMemoryAllocation for a growth mgbd refuses for good: the job
      // dies of out-of-memory, alone (docs/service.md, "Grow liveness").
      FinishJob(j, JobOutcome::kOutOfMemory,
                absl::StrCat("mgbd refused to grow task ", job.task_index, ": ",
                             grown.status().message()));
      return;
    }
    if (!grown->grown) {
      job.phase = Phase::kGrowing;  // blocked in the guard: holds memory, uses no SMs
      job.pending_bytes = bytes;
      job.rate = 0.0;
      ++job.version;
      Reschedule(gpu);
      DrainCoreEvents();
      return;
    }
    job.reserved = grown->memory_bytes;
    DrainCoreEvents();
    if (jobs_[j].phase == Phase::kDone) return;
  }
  if (!Allocate(j, bytes - job.used, "growing its task memory")) return;
  job.used = bytes;
  Reschedule(gpu);
}

void NodeSimulation::OnGrown(size_t j, uint64_t reservation) {
  JobState &job = jobs_[j];
  const int gpu = job.gpu;
  Settle(gpu);
  job.reserved = reservation;
  job.phase = Phase::kRunning;
  if (!Allocate(j, job.pending_bytes - job.used, "growing its task memory")) return;
  job.used = job.pending_bytes;
  Reschedule(gpu);
}

void NodeSimulation::EndTask(size_t j) {
  JobState &job = jobs_[j];
  const int gpu = job.gpu;
  auto &resident = gpus_[gpu].resident;
  resident.erase(std::find(resident.begin(), resident.end(), j));
  gpus_[gpu].used -= job.used;
  job.used = 0;
  job.gpu = -1;
  job.phase = Phase::kHost;
  ++job.version;
  Reschedule(gpu);
  (void)core_->TaskEnd(job.session, job.task, ToMicros(now_));  // our own running task: cannot fail
  job.task = 0;
  DrainCoreEvents();
  const auto &tasks = jobs_[j].profile->tasks;
  ++job.task_index;
  const double host = job.task_index < tasks.size() ? tasks[job.task_index].host_before_s
                                                    : jobs_[j].profile->host_after_s;
  Push(now_ + host, EventType::kHostDone, j);
}

void NodeSimulation::FinishJob(size_t j, JobOutcome outcome, const std::string &error) {
  JobState &job = jobs_[j];
  if (job.gpu >= 0) {
    const int gpu = job.gpu;
    Settle(gpu);
    auto &resident = gpus_[gpu].resident;
    auto it = std::find(resident.begin(), resident.end(), j);
    if (it != resident.end()) resident.erase(it);
    gpus_[gpu].used -= job.used;
    job.used = 0;
  }
  for (int g = 0; g < static_cast<int>(gpus_.size()); ++g) {
    if (!job.has_context[g]) continue;
    if (g != job.gpu) Settle(g);
    gpus_[g].used -= options_.context_bytes;
    job.has_context[g] = false;
    Reschedule(g);
  }
  if (job.gpu >= 0) Reschedule(job.gpu);
  job.gpu = -1;
  job.phase = Phase::kDone;
  ++job.version;
  records_[j].ended_s = now_;
  records_[j].outcome = outcome;
  records_[j].error = error;
  last_end_ = std::max(last_end_, now_);
  finished_.push_back(j);
  session_job_.erase(job.session);
  (void)core_->CloseSession(job.session, ToMicros(now_));  // releases what mgbd still holds for it
  --busy_workers_;
  DrainCoreEvents();
  StartReadyJobs();
}

void NodeSimulation::Settle(int gpu) {
  GpuState &g = gpus_[gpu];
  const double dt = now_ - g.last_settled;
  if (dt > 0) {
    for (size_t j : g.resident) {
      JobState &job = jobs_[j];
      if (job.phase != Phase::kRunning) continue;
      job.progress += dt * job.rate / CurrentTask(j).solo_s;
      records_[j].kernel_s += dt * job.kernel_share;
    }
  }
  g.last_settled = now_;
}

void NodeSimulation::Reschedule(int gpu) {
  GpuState &g = gpus_[gpu];
  double sum = 0.0;
  size_t active = 0;
  for (size_t j : g.resident) {
    if (jobs_[j].phase != Phase::kRunning) continue;
    sum += CurrentTask(j).busy_fraction * jobs_[j].occupancy;
    ++active;
  }
  for (size_t j : g.resident) {
    JobState &job = jobs_[j];
    if (job.phase != Phase::kRunning) continue;
    const TaskProfile &task = CurrentTask(j);
    job.rate = options_.model.Rate(task.busy_fraction, sum, active);
    job.kernel_share = task.busy_fraction * options_.model.Stretch(sum, active) * job.rate;
    job.target = 1.0;
    // The next step not yet applied, not the next point past `progress`: a reschedule at the very
    // moment a job reaches a step (settling puts it on the point) must not skip that step.
    for (double p : task.MemoryChangePoints()) {
      if (p > job.stepped_to) {
        job.target = p;
        break;
      }
    }
    ++job.version;
    const double left = std::max(0.0, job.target - job.progress) * task.solo_s / job.rate;
    Push(now_ + left, EventType::kMilestone, j, job.version);
  }
  const double busy = std::min(1.0, sum);
  if (g.history.back().t == now_) {
    g.history.back() = {now_, busy, g.used};
  } else {
    g.history.push_back({now_, busy, g.used});
  }
}

void NodeSimulation::Finalise(SimResult &result, double makespan) const {
  const size_t n = gpus_.size();
  result.mean_sm_busy.assign(n, 0.0);
  result.mean_memory_used.assign(n, 0.0);
  const size_t buckets = makespan > 0 ? std::max<size_t>(1, options_.utilisation_buckets) : 0;
  for (size_t b = 0; b < buckets; ++b) {
    UtilisationSample s;
    s.start_s = makespan * static_cast<double>(b) / buckets;
    s.end_s = makespan * static_cast<double>(b + 1) / buckets;
    s.sm_busy.assign(n, 0.0);
    s.memory_used.assign(n, 0.0);
    result.utilisation.push_back(std::move(s));
  }
  for (size_t g = 0; g < n; ++g) {
    const auto &h = gpus_[g].history;
    const double capacity = static_cast<double>(options_.gpus[g].memory_bytes);
    // Each history point holds until the next one; integrate its overlap with every bucket.
    for (size_t i = 0; i < h.size() && makespan > 0; ++i) {
      const double from = h[i].t, to = i + 1 < h.size() ? h[i + 1].t : makespan;
      if (to <= from) continue;
      const double width = makespan / buckets;
      for (size_t b = static_cast<size_t>(from / width); b < buckets; ++b) {
        UtilisationSample &s = result.utilisation[b];
        const double overlap = std::min(to, s.end_s) - std::max(from, s.start_s);
        if (overlap <= 0) {
          if (s.start_s >= to) break;
          continue;
        }
        s.sm_busy[g] += h[i].sm_busy * overlap / width;
        s.memory_used[g] += static_cast<double>(h[i].used) / capacity * overlap / width;
      }
      result.mean_sm_busy[g] += h[i].sm_busy * (to - from) / makespan;
      result.mean_memory_used[g] +=
          static_cast<double>(h[i].used) / capacity * (to - from) / makespan;
    }
  }
}

}  // namespace mgb::sim
