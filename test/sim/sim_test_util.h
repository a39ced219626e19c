// Small builders shared by the simulator tests.
#ifndef MGB_TEST_SIM_SIM_TEST_UTIL_H
#define MGB_TEST_SIM_SIM_TEST_UTIL_H

#include <string>

#include "job_profile.h"
#include "simulator.h"

namespace mgb::sim::test {

inline constexpr uint64_t kGiB = uint64_t{1} << 30;

// A job of one task: host_before, solo_s on the GPU, host_after.
inline JobProfile OneTaskJob(std::string name, double host_before, double solo, double host_after,
                             uint64_t memory, double busy = 1.0, double arrival = 0.0) {
  JobProfile job;
  job.name = std::move(name);
  job.arrival_s = arrival;
  job.host_after_s = host_after;
  TaskProfile task;
  task.host_before_s = host_before;
  task.solo_s = solo;
  task.busy_fraction = busy;
  task.memory_bytes = memory;
  task.shape.grid = core::Dim3{1056, 1, 1};
  task.shape.block = core::Dim3{256, 1, 1};
  job.tasks.push_back(task);
  return job;
}

inline SimOptions Node(size_t gpus, uint64_t memory, const std::string &policy, uint32_t workers) {
  SimOptions options;
  options.gpus = UniformGpus(gpus, memory, 132);
  auto parsed = core::ParsePolicy(policy);
  if (parsed.ok()) options.core.policy = *parsed;
  options.workers = workers;
  return options;
}

inline double Makespan(const SimResult &result) {
  double end = 0;
  for (const JobRecord &job : result.jobs) end = end > job.ended_s ? end : job.ended_s;
  return end;
}

}  // namespace mgb::sim::test

#endif  // MGB_TEST_SIM_SIM_TEST_UTIL_H
