#include "simulator.h"

#include <algorithm>
#include <numeric>

#include "node_simulation.h"

namespace mgb::sim {

absl::StatusOr<SimResult> Simulate(const Trace &trace, const SimOptions &options) {
  if (trace.jobs.empty()) return absl::InvalidArgumentError("the trace has no jobs");
  if (options.gpus.empty()) return absl::InvalidArgumentError("the node has no GPUs");
  NodeSimulation node(options);
  if (absl::Status started = node.Start(); !started.ok()) return started;
  for (size_t j = 0; j < trace.jobs.size(); ++j)
    node.AddJob(trace.jobs[j], static_cast<int64_t>(j) + 1);

  // Arrivals in time order (ties: trace order) are a cursor, not heap entries; an arrival goes
  // before an event at the same time.
  std::vector<size_t> arrivals(trace.jobs.size());
  std::iota(arrivals.begin(), arrivals.end(), size_t{0});
  std::stable_sort(arrivals.begin(), arrivals.end(), [&](size_t a, size_t b) {
    return trace.jobs[a].arrival_s < trace.jobs[b].arrival_s;
  });
  size_t next_arrival = 0;
  while (next_arrival < arrivals.size() || node.HasEvents()) {
    if (next_arrival < arrivals.size() &&
        trace.jobs[arrivals[next_arrival]].arrival_s <= node.NextEventTime()) {
      const size_t j = arrivals[next_arrival++];
      node.Arrive(j, trace.jobs[j].arrival_s);
    } else {
      node.Step();
    }
  }
  return node.Finish(node.last_end());
}

std::vector<core::GpuSpec> UniformGpus(size_t count, uint64_t memory_bytes, uint32_t sms) {
  std::vector<core::GpuSpec> gpus(count);
  for (size_t i = 0; i < count; ++i) {
    gpus[i].name = "g" + std::to_string(i);
    gpus[i].memory_bytes = memory_bytes;
    gpus[i].sms = sms;
  }
  return gpus;
}

}  // namespace mgb::sim
