// The slowdown model's arithmetic, and calibration recovering known parameters from measurements.
#include <catch2/catch.hpp>

#include "slowdown_model.h"

using namespace mgb::sim;

TEST_CASE("a task alone runs at solo speed; by default host-only time is never slowed",
          "[sim][model]") {
  SlowdownModel m;
  m.interference = 0.3;
  CHECK(m.Rate(0.7, 0.7, 1) == Approx(1.0));
  CHECK(m.Rate(0.0, 5.0, 6) == Approx(1.0));
  // Two full tasks: U = 2, stretch 2 * 1.3; busy 1 -> rate 1 / 2.6.
  CHECK(m.Rate(1.0, 2.0, 2) == Approx(1 / 2.6));
}

TEST_CASE("PredictCoRun lets the others speed up when one leaves", "[sim][model]") {
  SlowdownModel m;
  m.interference = 0.0;
  CoRunGroup g{100, {{1.0, 100, 10, 0}, {1.0, 100, 20, 0}}};
  // Together at half speed until the short one ends at 20 (10 s of work each done); the long one
  // then does its last 10 s alone: 30.
  const std::vector<double> t = PredictCoRun(m, g);
  CHECK(t[0] == Approx(20));
  CHECK(t[1] == Approx(30));
}

TEST_CASE("calibration recovers the parameters that produced the measurements", "[sim][model]") {
  SlowdownModel truth;
  truth.interference = 0.07;
  truth.demand_scale = 0.8;
  std::vector<CoRunGroup> groups;
  const double busy[] = {0.3, 0.6, 0.9, 1.0};
  for (int n = 2; n <= 4; ++n) {
    for (double b : busy) {
      CoRunGroup g{8448, {}};
      for (int i = 0; i < n; ++i) g.tasks.push_back({b, 8448u / (i + 1), 10.0 + 5 * i, 0});
      const std::vector<double> measured = PredictCoRun(truth, g);
      for (int i = 0; i < n; ++i) g.tasks[i].measured_s = measured[i];
      groups.push_back(g);
    }
  }
  const Calibration fit = Calibrate(groups);
  CHECK(fit.model.interference == Approx(0.07).margin(0.01));
  CHECK(fit.model.demand_scale == Approx(0.8).margin(0.05));
  CHECK(fit.error.mean_abs_relative < 0.01);
  // The default model is measurably worse on the same data: the error is real, not assumed.
  CHECK(MeasureError(SlowdownModel{}, groups).mean_abs_relative > fit.error.mean_abs_relative);
}

// Session 20: whole co-runs on 2 x H100 spent 7-19% more host time than solo (docs/simulator.md).
TEST_CASE("host_interference stretches host parts per co-runner, and a fit recovers it",
          "[sim][model]") {
  SlowdownModel m;
  m.interference = 0.0;
  m.host_interference = 0.1;
  CHECK(m.Rate(0.0, 0.0, 1) == Approx(1.0));                    // alone: solo speed
  CHECK(m.Rate(0.0, 0.0, 3) == Approx(1 / 1.2));                // host only, two co-runners: 1.2x
  CHECK(m.Rate(0.5, 1.0, 2) == Approx(1 / (0.5 * 1.1 + 0.5)));  // U = 1: kernels unstretched

  SlowdownModel truth;
  truth.interference = 0.05;
  truth.demand_scale = 0.8;
  truth.host_interference = 0.12;
  std::vector<CoRunGroup> groups;
  for (int n = 2; n <= 4; ++n) {
    for (double b : {0.2, 0.5, 0.8}) {
      CoRunGroup g{8448, {}};
      for (int i = 0; i < n; ++i) g.tasks.push_back({b, 8448u / (i + 1), 10.0 + 5 * i, 0});
      const std::vector<double> measured = PredictCoRun(truth, g);
      for (int i = 0; i < n; ++i) g.tasks[i].measured_s = measured[i];
      groups.push_back(g);
    }
  }
  auto error = [&](const SlowdownModel &model) {
    return MeasureError(model, groups).mean_abs_relative;
  };
  const SlowdownModel with_host = FitModel(error, /*with_host=*/true);
  CHECK(with_host.host_interference == Approx(0.12).margin(0.01));
  CHECK(error(with_host) < 0.01);
  const SlowdownModel without = FitModel(error);
  CHECK(without.host_interference == 0.0);
  CHECK(error(without) > 5 * error(with_host));

  const absl::StatusOr<SlowdownModel> read = ModelFromJson(ModelToJson(with_host), "m.json");
  REQUIRE(read.ok());
  CHECK(read->host_interference == Approx(with_host.host_interference));
  CHECK_FALSE(ModelToJson(SlowdownModel{}).contains("host_interference"));  // old files unchanged
}
