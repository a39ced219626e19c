// The slowdown model's arithmetic, and calibration recovering known parameters from measurements.
#include <catch2/catch.hpp>

#include "slowdown_model.h"

using namespace mgb::sim;

TEST_CASE("a task alone runs at solo speed; host-only time is never slowed", "[sim][model]") {
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
