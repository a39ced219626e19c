#include <cstdio>

#include "kernels.cuh"

// Host-only C++ calling CUDA code of a library target.
int main() {
  float last = scale_round_trip(1 << 20, 3.0f);
  std::printf("%s: last value %g\n", last == 3.0f ? "PASS" : "FAIL", last);
  return last == 3.0f ? 0 : 1;
}
