// Seeded random draws that are the same on every machine: mt19937_64's sequence is fixed by the
// standard, std:: distributions are not, so the draws are computed here.
#ifndef MGB_TOOLS_SIM_PORTABLE_DRAW_H
#define MGB_TOOLS_SIM_PORTABLE_DRAW_H

#include <cmath>
#include <cstdint>
#include <random>

namespace mgb::sim {

class PortableDraw {
 public:
  explicit PortableDraw(uint64_t seed) : engine_(seed) {}
  double Unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Unit(); }
  size_t Index(size_t n) { return static_cast<size_t>(Unit() * static_cast<double>(n)); }
  double Exponential(double mean) { return -mean * std::log(1.0 - Unit()); }

 private:
  std::mt19937_64 engine_;
};

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_PORTABLE_DRAW_H
