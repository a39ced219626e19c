// Generates the paper's workload shapes: N jobs at a large:small ratio, seeded, drawn from the
// six workloads of examples/workloads with --gb sizes ("small" 6-25% of a GPU, "large" above 25%)
// and --iters chosen from a calibration so each job runs about a target time alone.
#ifndef MGB_SERVICE_BATCH_MIX_GENERATOR_H
#define MGB_SERVICE_BATCH_MIX_GENERATOR_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "job_list.h"

namespace mgb::batch {

// Seconds per iteration of a workload alone: per_iter_s + per_iter_per_gib_s * gb.
struct IterCost {
  double per_iter_s = 0;
  double per_iter_per_gib_s = 0;
};

struct MixSpec {
  int jobs = 16;
  int large = 1, small = 1;      // large:small ratio
  uint64_t seed = 1;
  double gpu_gib = 140;          // memory of one GPU
  double small_min = 0.06, small_max = 0.25;  // fractions of gpu_gib
  double large_min = 0.26, large_max = 0.70;
  double max_gib = 100;          // no job above this footprint
  double target_seconds = 30;    // solo run time each job is sized for
  std::string bin_dir = "build/workloads";
  std::map<std::string, IterCost> costs;  // per workload; defaults from DefaultIterCosts()
};

// The six workloads (binary names in bin_dir).
const std::vector<std::string>& WorkloadNames();

// Rough per-iteration costs from bandwidth/FLOP estimates, used until scripts/gpu/workloads.sh
// has measured them (a calibration file replaces them).
std::map<std::string, IterCost> DefaultIterCosts();

// Reads {"<workload>": {"per_iter_s": x, "per_iter_per_gib_s": y}, ...}; "" on success.
std::string LoadIterCosts(const std::string& path, std::map<std::string, IterCost>& costs);

// Parses "L:S" (e.g. "3:1"); false when malformed.
bool ParseRatio(const std::string& text, int& large, int& small);

std::vector<Job> GenerateMix(const MixSpec& spec);

}  // namespace mgb::batch

#endif  // MGB_SERVICE_BATCH_MIX_GENERATOR_H
