// Host-only C++ compiled by nvcc and passed through unchanged.
#include "buffers.h"
#include <cstdio>

int main() {
  int bad = run_pipeline(1000);
  std::printf("%s\n", bad ? "FAIL" : "PASS");
  return bad != 0;
}
