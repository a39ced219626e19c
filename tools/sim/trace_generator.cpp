#include "trace_generator.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "portable_draw.h"

namespace mgb::sim {
namespace {

// Stand-ins for examples/workloads/ (shape of the widest kernel; share of time in kernels).
struct JobKind {
  const char *name;
  double busy_fraction;
  uint32_t grid;
  uint32_t block;
  uint32_t tasks;
};
constexpr JobKind kKinds[] = {
    {"backprop", 0.85, 4096, 256, 1}, {"srad", 0.90, 8192, 256, 1},  {"md", 0.80, 2048, 128, 1},
    {"needle", 0.50, 256, 32, 2},     {"dwt2d", 0.60, 1024, 256, 2}, {"bfs", 0.70, 2048, 512, 1},
};

JobProfile MakeJob(PortableDraw &draw, bool large, const GeneratorOptions &options, size_t index) {
  const JobKind &kind = kKinds[draw.Index(std::size(kKinds))];
  const double share = large ? draw.Uniform(0.25, 0.70) : draw.Uniform(0.06, 0.25);
  const uint64_t peak =
      static_cast<uint64_t>(share * static_cast<double>(options.gpu_memory_bytes));
  const double solo = draw.Uniform(options.min_solo_s, options.max_solo_s);
  JobProfile job;
  job.name = std::string(kind.name) + "-" + (large ? "L" : "S") + std::to_string(index);
  const double host = solo * draw.Uniform(0.05, 0.15);  // input generation, checking
  job.host_after_s = host * 0.3;
  for (uint32_t t = 0; t < kind.tasks; ++t) {
    TaskProfile task;
    task.host_before_s = t == 0 ? host * 0.7 : 0.2;
    task.solo_s = (solo - host) / kind.tasks;
    task.busy_fraction = std::min(1.0, kind.busy_fraction * draw.Uniform(0.9, 1.1));
    task.memory_bytes = peak;
    // Inputs are copied in first, work buffers allocated after: real use ramps to the peak.
    task.memory = {{0.0, peak / 2}, {0.1, peak}};
    task.shape.grid = core::Dim3{kind.grid, 1, 1};
    task.shape.block = core::Dim3{kind.block, 1, 1};
    job.tasks.push_back(std::move(task));
  }
  return job;
}

}  // namespace

absl::Status ParseMix(const std::string &text, GeneratorOptions &options) {
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  uint32_t large = 0, small = 0;
  if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &large) ||
      !absl::SimpleAtoi(parts[1], &small) || large + small == 0) {
    return absl::InvalidArgumentError(
        "must be LARGE:SMALL with non-negative integers, "
        "not both 0 (e.g. 3:1), got \"" +
        text + "\"");
  }
  options.large_per_small = large;
  options.small_share = small;
  return absl::OkStatus();
}

Trace GenerateTrace(const GeneratorOptions &options) {
  PortableDraw draw(options.seed);
  Trace trace;
  trace.comment = "synthetic (mgb simulate --generate): " + std::to_string(options.jobs) +
                  " jobs, mix " + std::to_string(options.large_per_small) + ":" +
                  std::to_string(options.small_share) + ", seed " + std::to_string(options.seed) +
                  "; stand-in profiles, not measurements";
  trace.jobs.reserve(options.jobs);
  const uint32_t cycle = options.large_per_small + options.small_share;
  // Exact ratio: the first large_per_small of every cycle of slots are large, then shuffled.
  std::vector<bool> large(options.jobs);
  for (size_t i = 0; i < options.jobs; ++i) large[i] = i % cycle < options.large_per_small;
  for (size_t i = options.jobs; i > 1; --i) {
    const size_t k = draw.Index(i);
    const bool tmp = large[i - 1];
    large[i - 1] = large[k];
    large[k] = tmp;
  }
  double arrival = 0.0;
  for (size_t i = 0; i < options.jobs; ++i) {
    JobProfile job = MakeJob(draw, large[i], options, i);
    if (options.mean_arrival_gap_s > 0 && i > 0)
      arrival += draw.Exponential(options.mean_arrival_gap_s);
    job.arrival_s = arrival;
    trace.jobs.push_back(std::move(job));
  }
  return trace;
}

}  // namespace mgb::sim
