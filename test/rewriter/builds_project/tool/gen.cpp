// A CUDA-free build tool of the same Makefile (it generates a table at build time), linked by the
// same $(CXX) as the GPU program: it must link exactly as with the plain compiler, without libmgb.
#include <cstdio>

#include "table.h"

int main() {
  for (int i = 0; i < 4; ++i) std::printf("%d\n", table_entry(i));
  return 0;
}
