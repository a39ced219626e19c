#include "cluster_simulator.h"

#include <algorithm>
#include <memory>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "node_simulation.h"
#include "slurm_queue.h"
#include "slurm_select.h"

namespace mgb::sim {
namespace {

class ClusterSimulation {
 public:
  ClusterSimulation(const Trace &trace, const ClusterOptions &options)
      : trace_(trace),
        options_(options),
        node_options_(options.node),
        pool_(options.nodes, options.policy.NodeTotal(options.node.gpus)),
        queue_(trace.jobs.size()) {
    node_options_.core.policy = options.policy.NodePolicy();
    node_options_.workers = 0;
  }

  absl::StatusOr<ClusterResult> Run();

 private:
  void Submit(size_t position, double now);
  // Starts, oldest first, every pending job that fits some node now (FIFO with skip).
  void SchedulePass(double now);
  // The node whose next event is earliest (lowest index on ties); SIZE_MAX when none has one.
  size_t EarliestNode() const;
  ClusterResult Collect();

  const Trace &trace_;
  const ClusterOptions &options_;
  SimOptions node_options_;
  GresPool pool_;
  PendingQueue queue_;
  std::vector<std::unique_ptr<NodeSimulation>> nodes_;
  std::vector<std::vector<size_t>> node_jobs_;  // per node: the trace index of each of its jobs
  std::vector<size_t> submission_order_;        // queue position -> trace index
  std::vector<uint64_t> request_;               // per trace job, in GRES units
  std::vector<int> job_node_;
  std::vector<size_t> refused_;  // asked more than a node has
  size_t peak_pending_ = 0;
};

absl::StatusOr<ClusterResult> ClusterSimulation::Run() {
  if (trace_.jobs.empty()) return absl::InvalidArgumentError("the trace has no jobs");
  if (options_.nodes == 0) return absl::InvalidArgumentError("the cluster has no nodes");
  if (options_.node.gpus.empty()) return absl::InvalidArgumentError("the nodes have no GPUs");
  for (size_t n = 0; n < options_.nodes; ++n) {
    nodes_.push_back(std::make_unique<NodeSimulation>(node_options_));
    if (absl::Status started = nodes_.back()->Start(); !started.ok()) return started;
  }
  node_jobs_.resize(options_.nodes);
  job_node_.assign(trace_.jobs.size(), -1);
  request_.reserve(trace_.jobs.size());
  for (const JobProfile &job : trace_.jobs) {
    request_.push_back(options_.policy.JobRequest(job, node_options_.context_bytes));
  }
  submission_order_.resize(trace_.jobs.size());
  std::iota(submission_order_.begin(), submission_order_.end(), size_t{0});
  std::stable_sort(submission_order_.begin(), submission_order_.end(), [&](size_t a, size_t b) {
    return trace_.jobs[a].arrival_s < trace_.jobs[b].arrival_s;
  });

  size_t next = 0;  // the next submission
  while (true) {
    const size_t node = EarliestNode();
    const double event_time = node == SIZE_MAX ? 0.0 : nodes_[node]->NextEventTime();
    if (next < submission_order_.size() &&
        (node == SIZE_MAX || trace_.jobs[submission_order_[next]].arrival_s <= event_time)) {
      Submit(next, trace_.jobs[submission_order_[next]].arrival_s);
      ++next;
      continue;
    }
    if (node == SIZE_MAX) break;
    nodes_[node]->Step();
    const std::vector<size_t> ended = nodes_[node]->TakeFinished();
    for (size_t local : ended) pool_.Release(node, request_[node_jobs_[node][local]]);
    if (!ended.empty()) SchedulePass(event_time);
  }
  return Collect();
}

size_t ClusterSimulation::EarliestNode() const {
  size_t best = SIZE_MAX;
  double best_time = 0.0;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (!nodes_[n]->HasEvents()) continue;
    const double t = nodes_[n]->NextEventTime();
    if (best == SIZE_MAX || t < best_time) {
      best = n;
      best_time = t;
    }
  }
  return best;
}

void ClusterSimulation::Submit(size_t position, double now) {
  const size_t j = submission_order_[position];
  if (request_[j] > pool_.per_node()) {
    refused_.push_back(j);
    return;
  }
  queue_.Add(position, request_[j]);
  peak_pending_ = std::max(peak_pending_, queue_.size());
  SchedulePass(now);
}

void ClusterSimulation::SchedulePass(double now) {
  // MostFree only shrinks during a pass, so a job skipped once stays skipped: asking for the
  // oldest job that fits the most free node, again after each start, is the walk in order.
  while (std::optional<size_t> position = queue_.OldestAtMost(pool_.MostFree())) {
    const size_t j = submission_order_[*position];
    const size_t node = *pool_.FirstFit(request_[j]);
    pool_.Grant(node, request_[j]);
    queue_.Remove(*position);
    job_node_[j] = static_cast<int>(node);
    const size_t local = nodes_[node]->AddJob(trace_.jobs[j], static_cast<int64_t>(j) + 1);
    node_jobs_[node].push_back(j);
    nodes_[node]->Arrive(local, now);
  }
}

ClusterResult ClusterSimulation::Collect() {
  double makespan = 0.0;
  for (const auto &node : nodes_) makespan = std::max(makespan, node->last_end());
  for (size_t j : refused_) makespan = std::max(makespan, trace_.jobs[j].arrival_s);

  ClusterResult out;
  SimResult &run = out.run;
  run.policy = options_.policy.Name();
  run.model_source = node_options_.model.source;
  run.jobs.resize(trace_.jobs.size());
  const size_t per_node = node_options_.gpus.size();
  for (size_t n = 0; n < nodes_.size(); ++n) {
    SimResult part = nodes_[n]->Finish(makespan);
    for (size_t g = 0; g < per_node; ++g) {
      run.gpu_names.push_back(absl::StrCat("n", n, ".", part.gpu_names[g]));
      run.gpu_memory_bytes.push_back(part.gpu_memory_bytes[g]);
    }
    for (size_t local = 0; local < part.jobs.size(); ++local) {
      JobRecord &record = part.jobs[local];
      for (int &g : record.gpus) g += static_cast<int>(n * per_node);
      run.jobs[node_jobs_[n][local]] = std::move(record);
    }
    // Every node integrated over the same makespan and buckets: the samples line up.
    if (run.utilisation.empty()) {
      run.utilisation = std::move(part.utilisation);
    } else {
      for (size_t b = 0; b < run.utilisation.size(); ++b) {
        auto append = [](std::vector<double> &to, const std::vector<double> &from) {
          to.insert(to.end(), from.begin(), from.end());
        };
        append(run.utilisation[b].sm_busy, part.utilisation[b].sm_busy);
        append(run.utilisation[b].memory_used, part.utilisation[b].memory_used);
      }
    }
    run.mean_sm_busy.insert(run.mean_sm_busy.end(), part.mean_sm_busy.begin(),
                            part.mean_sm_busy.end());
    run.mean_memory_used.insert(run.mean_memory_used.end(), part.mean_memory_used.begin(),
                                part.mean_memory_used.end());
    run.decisions += part.decisions;
    run.events += part.events;
  }
  for (size_t j : refused_) {
    JobRecord &record = run.jobs[j];
    record.name = trace_.jobs[j].name;
    record.queued_s = record.started_s = record.ended_s = trace_.jobs[j].arrival_s;
    record.solo_s = trace_.jobs[j].SoloSeconds();
    for (const TaskProfile &task : trace_.jobs[j].tasks) {
      record.memory_bytes = std::max(record.memory_bytes, task.memory_bytes);
    }
    record.outcome = JobOutcome::kRejected;
    record.error = absl::StrCat("Slurm: the job asks ", request_[j], " of a GRES a node has ",
                                pool_.per_node(), " of");
  }
  out.job_node = std::move(job_node_);
  out.gres_per_node = pool_.per_node();
  out.peak_granted = pool_.peak_granted();
  out.peak_pending = peak_pending_;
  return out;
}

}  // namespace

absl::StatusOr<ClusterResult> SimulateCluster(const Trace &trace, const ClusterOptions &options) {
  ClusterSimulation simulation(trace, options);
  return simulation.Run();
}

}  // namespace mgb::sim
