#include "slowdown_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "json_fields.h"

namespace mgb::sim {

double SlowdownModel::Stretch(double busy_occupancy_sum, size_t tasks) const {
  const double sm_stretch = std::max(1.0, demand_scale * busy_occupancy_sum);
  const double extra = tasks > 1 ? interference * static_cast<double>(tasks - 1) : 0.0;
  return sm_stretch * (1.0 + extra);
}

double SlowdownModel::Rate(double busy, double busy_occupancy_sum, size_t tasks) const {
  const double host_stretch =
      1.0 + (tasks > 1 ? host_interference * static_cast<double>(tasks - 1) : 0.0);
  return 1.0 / ((1.0 - busy) * host_stretch + busy * Stretch(busy_occupancy_sum, tasks));
}

double Occupancy(uint64_t warps, uint64_t warp_capacity) {
  if (warp_capacity == 0) return 1.0;
  return std::min(1.0, static_cast<double>(warps) / static_cast<double>(warp_capacity));
}

nlohmann::json ModelToJson(const SlowdownModel &model) {
  nlohmann::json json = {{"interference", model.interference},
                         {"demand_scale", model.demand_scale},
                         {"source", model.source}};
  if (model.host_interference != 0.0) json["host_interference"] = model.host_interference;
  return json;
}

absl::StatusOr<SlowdownModel> ModelFromJson(const nlohmann::json &json, const std::string &file) {
  const Field root(json, file);
  root.OnlyKeys({"interference", "demand_scale", "host_interference", "source", "error"});
  SlowdownModel model;
  model.interference = root["interference"].NumberIn(0.0, 10.0);
  model.demand_scale = root["demand_scale"].NumberIn(0.01, 10.0);
  if (root.Has("host_interference")) {
    model.host_interference = root["host_interference"].NumberIn(0.0, 10.0);
  }
  model.source = root.String("source", file);
  if (!root.ok()) return root.status();
  return model;
}

absl::StatusOr<SlowdownModel> ReadModelFile(const std::string &path) {
  absl::StatusOr<nlohmann::json> json = ParseJsonFile(path);
  if (!json.ok()) return json.status();
  return ModelFromJson(*json, path);
}

std::vector<double> PredictCoRun(const SlowdownModel &model, const CoRunGroup &group) {
  const size_t n = group.tasks.size();
  std::vector<double> remaining(n), finish(n, 0.0), occupancy(n);
  std::vector<bool> running(n, true);
  for (size_t i = 0; i < n; ++i) {
    remaining[i] = group.tasks[i].solo_s;
    occupancy[i] = Occupancy(group.tasks[i].warps, group.warp_capacity);
  }
  double now = 0.0;
  for (size_t left = n; left > 0;) {
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i) {
      if (running[i]) sum += group.tasks[i].busy_fraction * occupancy[i];
    }
    std::vector<double> rate(n, 0.0);
    double step = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < n; ++i) {
      if (!running[i]) continue;
      rate[i] = model.Rate(group.tasks[i].busy_fraction, sum, left);
      step = std::min(step, remaining[i] / rate[i]);
    }
    now += step;
    for (size_t i = 0; i < n; ++i) {
      if (!running[i]) continue;
      remaining[i] -= step * rate[i];
      if (remaining[i] <= 1e-9 * group.tasks[i].solo_s) {
        running[i] = false;
        finish[i] = now;
        --left;
      }
    }
  }
  return finish;
}

ModelError MeasureError(const SlowdownModel &model, const std::vector<CoRunGroup> &groups) {
  ModelError error;
  double sum = 0.0;
  for (const CoRunGroup &group : groups) {
    const std::vector<double> predicted = PredictCoRun(model, group);
    for (size_t i = 0; i < group.tasks.size(); ++i) {
      const double measured = group.tasks[i].measured_s;
      const double e = std::abs(predicted[i] - measured) / measured;
      sum += e;
      error.max_abs_relative = std::max(error.max_abs_relative, e);
      ++error.tasks;
    }
  }
  if (error.tasks) error.mean_abs_relative = sum / static_cast<double>(error.tasks);
  return error;
}

Calibration Calibrate(const std::vector<CoRunGroup> &groups) {
  Calibration best;
  best.model = FitModel(
      [&groups](const SlowdownModel &m) { return MeasureError(m, groups).mean_abs_relative; });
  best.error = MeasureError(best.model, groups);
  best.model.source = "calibrated on " + std::to_string(best.error.tasks) + " measured tasks";
  return best;
}

SlowdownModel FitModel(const std::function<double(const SlowdownModel &)> &objective,
                       bool with_host) {
  // Few parameters and a cheap objective: a coarse grid, then three rounds of a finer grid
  // around the best point, is robust (the objective has kinks from max(1, U)) and fast.
  SlowdownModel best;
  double best_value = std::numeric_limits<double>::infinity();
  double lo_i = 0.0, hi_i = 1.0, lo_d = 0.1, hi_d = 2.0, lo_h = 0.0, hi_h = with_host ? 0.3 : 0.0;
  for (int round = 0; round < 4; ++round) {
    const int steps = 20, host_steps = with_host ? 10 : 0;
    for (int a = 0; a <= steps; ++a) {
      for (int b = 0; b <= steps; ++b) {
        for (int c = 0; c <= host_steps; ++c) {
          SlowdownModel m;
          m.interference = lo_i + (hi_i - lo_i) * a / steps;
          m.demand_scale = lo_d + (hi_d - lo_d) * b / steps;
          m.host_interference = host_steps ? lo_h + (hi_h - lo_h) * c / host_steps : 0.0;
          const double value = objective(m);
          if (value < best_value) {
            best = m;
            best_value = value;
          }
        }
      }
    }
    const double wi = (hi_i - lo_i) / 10, wd = (hi_d - lo_d) / 10, wh = (hi_h - lo_h) / 5;
    lo_i = std::max(0.0, best.interference - wi);
    hi_i = best.interference + wi;
    lo_d = std::max(0.01, best.demand_scale - wd);
    hi_d = best.demand_scale + wd;
    lo_h = std::max(0.0, best.host_interference - wh);
    hi_h = best.host_interference + wh;
  }
  return best;
}

absl::StatusOr<std::vector<CoRunGroup>> ReadCoRunFile(const std::string &path) {
  const absl::StatusOr<nlohmann::json> json = ParseJsonFile(path);
  if (!json.ok()) return json.status();
  const Field root(*json, path);
  root.OnlyKeys({"warp_capacity", "groups", "comment"});
  const uint64_t capacity = root.Unsigned("warp_capacity", 0);
  std::vector<CoRunGroup> groups;
  const Field list = root["groups"];
  for (size_t g = 0; g < list.ArraySize(); ++g) {
    const Field group = list[g];
    group.OnlyKeys({"warp_capacity", "tasks", "comment"});
    CoRunGroup out;
    out.warp_capacity = group.Unsigned("warp_capacity", capacity);
    if (out.warp_capacity == 0) group["warp_capacity"].Fail("missing (here or at the top level)");
    const Field tasks = group["tasks"];
    if (tasks.ArraySize() == 0) tasks.Fail("a co-run group needs at least one task");
    for (size_t i = 0; i < tasks.ArraySize(); ++i) {
      const Field t = tasks[i];
      t.OnlyKeys({"busy_fraction", "warps", "solo_s", "measured_s", "name"});
      CoRunTask task;
      task.busy_fraction = t["busy_fraction"].NumberIn(0.0, 1.0);
      task.warps = t["warps"].Unsigned();
      task.solo_s = t["solo_s"].Number();
      task.measured_s = t["measured_s"].Number();
      if (task.solo_s <= 0) t["solo_s"].Fail("must be > 0");
      if (task.measured_s <= 0) t["measured_s"].Fail("must be > 0");
      out.tasks.push_back(task);
    }
    groups.push_back(std::move(out));
  }
  if (groups.empty()) list.Fail("no co-run groups");
  if (!root.ok()) return root.status();
  return groups;
}

}  // namespace mgb::sim
