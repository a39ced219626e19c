#include "mix_generator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

namespace mgb::batch {
namespace {

// Uniform in [lo, hi) from the raw 64-bit engine: std::*_distribution differ between standard
// libraries, and a mix must be the same wherever it is generated.
double Uniform(std::mt19937_64 &rng, double lo, double hi) {
  return lo + (hi - lo) * (double(rng() >> 11) * (1.0 / 9007199254740992.0));
}
size_t Pick(std::mt19937_64 &rng, size_t n) { return static_cast<size_t>(rng() % n); }

std::string FormatGb(double gb) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", gb);
  return text;
}

}  // namespace

Sizing SizeJob(const IterCost &cost, double gb, const MixSpec &spec) {
  Sizing sizing;
  const double kernel_s = spec.target_seconds * std::clamp(spec.gpu_fraction, 0.0, 1.0);
  sizing.iters = std::max(1L, std::lround(kernel_s / cost.Iteration(gb)));
  if (spec.gpu_fraction < 1.0 && cost.Snapshot(gb) > 0) {
    // The host share left after the input phase goes to snapshots.
    const double host_left = spec.target_seconds - kernel_s - cost.Input(gb);
    sizing.snapshots = std::max(0L, std::lround(host_left / cost.Snapshot(gb)));
  }
  return sizing;
}

const std::vector<std::string> &WorkloadNames() {
  static const std::vector<std::string> names = {"mlp_train", "heat2d",    "md_cells",
                                                 "nw_align",  "wavelet2d", "bfs_graph"};
  return names;
}

std::map<std::string, IterCost> DefaultIterCosts() {
  // Estimates for one H200 (not measurements): memory-bound passes at ~3 TB/s, the MLP's naive
  // GEMMs at ~4 TFLOP/s, MD's 27-cell force loop at ~30 TFLOP/s.
  return {{"heat2d", {2e-5, 3.6e-4}},   {"mlp_train", {2e-3, 0}},      {"md_cells", {1e-4, 1e-2}},
          {"nw_align", {5e-2, 1.2e-2}}, {"wavelet2d", {1e-3, 2.5e-3}}, {"bfs_graph", {1e-3, 4e-3}}};
}

absl::Status LoadIterCosts(const std::string &path, std::map<std::string, IterCost> &costs) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(path + ": cannot open the calibration file");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception &e) {  // bad syntax, or a number too large (1e400)
    return absl::InvalidArgumentError(path + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object())
    return absl::InvalidArgumentError(path + ": must be an object keyed by workload");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const auto &names = WorkloadNames();
    if (std::find(names.begin(), names.end(), it.key()) == names.end())
      return absl::InvalidArgumentError(path + ": " + it.key() + ": unknown workload");
    IterCost cost;
    const struct {
      const char *name;
      double *slot;
      bool required;  // the kernel costs; host costs are 0 (not measured) when absent
    } fields[] = {{"per_iter_s", &cost.per_iter_s, true},
                  {"per_iter_per_gib_s", &cost.per_iter_per_gib_s, true},
                  {"input_s", &cost.input_s, false},
                  {"input_s_per_gib", &cost.input_s_per_gib, false},
                  {"snapshot_s", &cost.snapshot_s, false},
                  {"snapshot_s_per_gib", &cost.snapshot_s_per_gib, false}};
    for (const auto &field : fields) {
      if (!field.required && !it->contains(field.name)) continue;
      if (!it->contains(field.name) || !(*it)[field.name].is_number() ||
          (*it)[field.name].get<double>() < 0)
        return absl::InvalidArgumentError(path + ": " + it.key() + "." + field.name +
                                          ": must be a number >= 0");
      *field.slot = (*it)[field.name].get<double>();
    }
    if (cost.per_iter_s + cost.per_iter_per_gib_s <= 0)
      return absl::InvalidArgumentError(path + ": " + it.key() + ": both costs are zero");
    costs[it.key()] = cost;
  }
  return absl::OkStatus();
}

bool ParseRatio(const std::string &text, int &large, int &small) {
  int l = 0, s = 0;
  char colon = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &l, &colon, &s, &extra) != 3 || colon != ':')
    return false;
  if (l < 0 || s < 0 || l + s == 0) return false;
  large = l;
  small = s;
  return true;
}

std::vector<Job> GenerateMix(const MixSpec &spec) {
  std::mt19937_64 rng(spec.seed);
  std::map<std::string, IterCost> costs = DefaultIterCosts();
  for (const auto &[name, cost] : spec.costs) costs[name] = cost;
  int large_count =
      static_cast<int>(std::lround(double(spec.jobs) * spec.large / (spec.large + spec.small)));
  std::vector<char> is_large(spec.jobs, 0);
  std::fill(is_large.begin(), is_large.begin() + large_count, true);
  for (int i = spec.jobs - 1; i > 0; --i)  // Fisher-Yates: submission order mixes the sizes
    std::swap(is_large[i], is_large[Pick(rng, size_t(i) + 1)]);

  std::vector<Job> jobs;
  const auto &names = WorkloadNames();
  for (int i = 0; i < spec.jobs; ++i) {
    Job job;
    job.workload = names[Pick(rng, names.size())];
    double lo = is_large[i] ? spec.large_min : spec.small_min;
    double hi = is_large[i] ? spec.large_max : spec.small_max;
    double gb = Uniform(rng, lo * spec.gpu_gib, std::min(hi * spec.gpu_gib, spec.max_gib));
    job.gb = std::stod(FormatGb(gb));  // the size the job is really given
    const IterCost &cost = costs.at(job.workload);
    const Sizing sizing = SizeJob(cost, job.gb, spec);
    job.name = std::string(is_large[i] ? "L" : "S") + std::to_string(i) + "-" + job.workload;
    job.argv = {spec.bin_dir + "/" + job.workload,
                "--gb",
                FormatGb(job.gb),
                "--iters",
                std::to_string(sizing.iters),
                "--seed",
                std::to_string(spec.seed * 1000 + i)};
    if (sizing.snapshots > 0) {
      job.argv.push_back("--snapshots");
      job.argv.push_back(std::to_string(sizing.snapshots));
    }
    job.memory_bytes = static_cast<uint64_t>(std::ceil(job.gb * 1024.0 * 1024.0 * 1024.0));
    job.arrival_s = 0;  // the paper's batch setting: everything queued at the start
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace mgb::batch
