/* A C file gcc compiles and clang cannot parse: a GCC nested function. mgb-cc must compile it as
 * written, loudly, with -include mgb/unseen_tu.h (test: rewriter.driver_fallback). */
#include <stddef.h>

#include <cuda_runtime.h>

float *make_zeroed(size_t n) {
  float *d = NULL;
  size_t bytes(void) { return n * sizeof(float); }
  if (cudaMalloc((void **)&d, bytes()) != cudaSuccess)
    return NULL;
  cudaMemset(d, 0, bytes());
  return d;
}
