// Generates the paper's workload shapes: N jobs at a large:small ratio, seeded, drawn from the
// six workloads of examples/workloads with --gb sizes ("small" 6-25% of a GPU, "large" above 25%)
// and --iters chosen from a calibration so each job runs about a target time alone.
#ifndef MGB_TOOLS_BATCH_MIX_GENERATOR_H
#define MGB_TOOLS_BATCH_MIX_GENERATOR_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "job_list.h"

namespace mgb::batch {

// Costs of a workload alone, linear in its footprint (gb): one iteration of kernels
// per_iter_s + per_iter_per_gib_s * gb; its host input phase input_s + input_s_per_gib * gb; one
// host snapshot (--snapshots) snapshot_s + snapshot_s_per_gib * gb. Host costs 0 = not measured.
struct IterCost {
  double per_iter_s = 0;
  double per_iter_per_gib_s = 0;
  double input_s = 0, input_s_per_gib = 0;
  double snapshot_s = 0, snapshot_s_per_gib = 0;

  double Iteration(double gb) const { return per_iter_s + per_iter_per_gib_s * gb; }
  double Input(double gb) const { return input_s + input_s_per_gib * gb; }
  double Snapshot(double gb) const { return snapshot_s + snapshot_s_per_gib * gb; }
};

struct MixSpec {
  int jobs = 16;
  int large = 1, small = 1;  // large:small ratio
  uint64_t seed = 1;
  double gpu_gib = 140;                       // memory of one GPU
  double small_min = 0.06, small_max = 0.25;  // fractions of gpu_gib
  double large_min = 0.26, large_max = 0.70;
  double max_gib = 100;        // no job above this footprint
  double target_seconds = 30;  // solo run time each job is sized for
  // Share of that time in kernels; the rest is host phases (input, then --snapshots), as in jobs
  // that read inputs and write results. 1 = kernels only (no snapshots, iters fill the target).
  double gpu_fraction = 1.0;
  std::string bin_dir = "build/workloads";
  std::map<std::string, IterCost> costs;  // per workload; defaults from DefaultIterCosts()
};

// The six workloads (binary names in bin_dir).
const std::vector<std::string> &WorkloadNames();

// Rough per-iteration costs from bandwidth/FLOP estimates, used until scripts/gpu/workloads.sh
// has measured them (a calibration file replaces them).
std::map<std::string, IterCost> DefaultIterCosts();

// Reads {"<workload>": {"per_iter_s": x, "per_iter_per_gib_s": y, and optionally "input_s",
// "input_s_per_gib", "snapshot_s", "snapshot_s_per_gib"}, ...} into `costs`. InvalidArgument
// naming the file and field, NotFound when it cannot be opened.
absl::Status LoadIterCosts(const std::string &path, std::map<std::string, IterCost> &costs);

// Parses "L:S" (e.g. "3:1"); false when malformed.
bool ParseRatio(const std::string &text, int &large, int &small);

// --iters and --snapshots for one job of `gb` GiB: kernels fill gpu_fraction of the target
// time; snapshots fill what the input phase leaves of the rest (none at gpu_fraction 1, or when
// the calibration has no snapshot cost).
struct Sizing {
  long iters = 1;
  long snapshots = 0;
};
Sizing SizeJob(const IterCost &cost, double gb, const MixSpec &spec);

std::vector<Job> GenerateMix(const MixSpec &spec);

}  // namespace mgb::batch

#endif  // MGB_TOOLS_BATCH_MIX_GENERATOR_H
