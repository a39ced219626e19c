#include <cstdio>
#include <vector>

// Host-only C++: compiled by the C++ compiler, never rewritten.
void report(const std::vector<float> &values) {
  std::printf("%s: last value %g\n", values.back() == 3.0f ? "PASS" : "FAIL", values.back());
}
