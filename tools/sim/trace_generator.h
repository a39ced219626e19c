// Synthetic traces with the paper's shapes (16/32 jobs, large:small 1:1..5:1, all queued at the
// start) and at scale (100,000 jobs arriving over time). Seeded and portable: the same options
// give the same trace on any machine (no std:: distributions, whose output is library-defined).
// The job kinds' figures are plausible stand-ins for the six workloads of examples/workloads/,
// NOT measurements; convert real solo runs (batch_import.h) for real profiles.
#ifndef MGB_TOOLS_SIM_TRACE_GENERATOR_H
#define MGB_TOOLS_SIM_TRACE_GENERATOR_H

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "job_profile.h"

namespace mgb::sim {

struct GeneratorOptions {
  size_t jobs = 16;
  uint32_t large_per_small = 1;   // the mix "L:1"; parsed from "1:1", "2:1", "3:1", "5:1", ...
  uint32_t small_share = 1;       // the "1" side (a mix "3:2" is allowed)
  uint64_t gpu_memory_bytes = 0;  // sizes are fractions of it: small 6-25%, large 25-70%
  uint64_t seed = 1;
  double mean_arrival_gap_s = 0.0;  // 0: all queued at time 0 (the paper); else Poisson arrivals
  double min_solo_s = 10.0;         // job solo time range (the issue: 10-60 s on an H200)
  double max_solo_s = 60.0;
};

// "L:S" with positive integers.
absl::Status ParseMix(const std::string &text, GeneratorOptions &options);

Trace GenerateTrace(const GeneratorOptions &options);

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_TRACE_GENERATOR_H
