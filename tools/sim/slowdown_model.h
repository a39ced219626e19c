// How co-running tasks slow each other down on one GPU (docs/simulator.md, "GPU model"). Every
// parameter lives in SlowdownModel; Calibrate() fits them to measured co-runs and states the error.
//
// A task has a solo time, a busy fraction b (share of the solo time the GPU runs its kernels; the
// rest is host work inside the task, transfers, synchronisation) and an occupancy
// o = min(1, warps / warp capacity of the GPU). With n tasks on a GPU, the SM demand is
//     U = demand_scale * sum_i(b_i * o_i)
// Under MPS kernels of different processes run side by side while U <= 1; beyond that the SMs
// are shared, stretching every busy part by U. Co-runners also compete for caches and memory
// bandwidth: interference per extra co-runner. Their host parts compete too (PCIe transfers,
// memory copies, CPU): host_interference per extra co-runner on the GPU. A task progresses
// through its solo time at
//     rate_i = 1 / ((1 - b_i) * (1 + host_interference * (n - 1))
//                   + b_i * max(1, U) * (1 + interference * (n - 1)))
#ifndef MGB_TOOLS_SIM_SLOWDOWN_MODEL_H
#define MGB_TOOLS_SIM_SLOWDOWN_MODEL_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace mgb::sim {

struct SlowdownModel {
  // Defaults are NOT calibrated yet (no co-run measurements exist): interference 2% per
  // co-runner is the paper's measured average kernel slowdown (1.8-2.5%, Table "Kernel
  // slowdowns"); demand_scale 1 is ideal SM sharing. Replace with Calibrate()'s output.
  double interference = 0.02;
  double demand_scale = 1.0;
  // 0 by default: co-run host phases take their solo time (the model before session 20).
  double host_interference = 0.0;
  std::string source = "default (uncalibrated)";

  // Progress rate (solo seconds per second) of a task with busy fraction `busy` on a GPU whose
  // tasks have sum(b_i * o_i) = `busy_occupancy_sum` and number `tasks`.
  double Rate(double busy, double busy_occupancy_sum, size_t tasks) const;
  // How much longer the busy part takes: max(1, U) * (1 + interference * (n - 1)).
  double Stretch(double busy_occupancy_sum, size_t tasks) const;
};

// Occupancy of a launch of `warps` warps on a GPU of `warp_capacity`.
double Occupancy(uint64_t warps, uint64_t warp_capacity);

nlohmann::json ModelToJson(const SlowdownModel &model);
// InvalidArgument naming `file` and the field; NotFound when the file cannot be opened.
absl::StatusOr<SlowdownModel> ModelFromJson(const nlohmann::json &json, const std::string &file);
absl::StatusOr<SlowdownModel> ReadModelFile(const std::string &path);

// One measured co-run: tasks started together on one GPU, each with its solo time and the time
// it really took next to the others.
struct CoRunTask {
  double busy_fraction = 1.0;
  uint64_t warps = 0;
  double solo_s = 0.0;
  double measured_s = 0.0;
};
struct CoRunGroup {
  uint64_t warp_capacity = 0;
  std::vector<CoRunTask> tasks;
};

// The model's run time for each task of the group (tasks leave as they finish, speeding the rest).
std::vector<double> PredictCoRun(const SlowdownModel &model, const CoRunGroup &group);

struct ModelError {
  double mean_abs_relative = 0.0;  // mean over tasks of |predicted - measured| / measured
  double max_abs_relative = 0.0;
  size_t tasks = 0;
};
ModelError MeasureError(const SlowdownModel &model, const std::vector<CoRunGroup> &groups);

struct Calibration {
  SlowdownModel model;
  ModelError error;
};
// Grid search (then refinement) of interference in [0, 1] and demand_scale in [0.1, 2]
// minimising the mean absolute relative error (host_interference stays 0: co-run groups of
// kernels alone cannot tell it). Needs at least one group with a task.
Calibration Calibrate(const std::vector<CoRunGroup> &groups);
// The same search for the model with the least `objective` (e.g. the worst of recorded runs'
// makespan errors: simulate_command.cpp), with host_interference searched in [0, 0.3] too when
// `with_host` is set; the model's source is left empty for the caller.
SlowdownModel FitModel(const std::function<double(const SlowdownModel &)> &objective,
                       bool with_host = false);

// {"warp_capacity": 8448, "groups": [{"tasks": [{"busy_fraction", "warps", "solo_s",
// "measured_s"}]}]}; a group may override warp_capacity. Errors as ReadModelFile's.
absl::StatusOr<std::vector<CoRunGroup>> ReadCoRunFile(const std::string &path);

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_SLOWDOWN_MODEL_H
