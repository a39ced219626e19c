// Shared by the runtime GPU examples: stop on a CUDA error, print the verdict.
#ifndef MGB_EXAMPLES_RUNTIME_EXAMPLE_CHECK_H
#define MGB_EXAMPLES_RUNTIME_EXAMPLE_CHECK_H

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime_api.h>

#define CHECK_CUDA(call)                                                                  \
  do {                                                                                    \
    cudaError_t check_cuda_error = (call);                                                \
    if (check_cuda_error != cudaSuccess) {                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
                   cudaGetErrorString(check_cuda_error));                                 \
      std::printf("FAIL %s\n", kExampleName);                                             \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

inline int Verdict(const char *name, bool ok) {
  std::printf("%s %s\n", ok ? "PASS" : "FAIL", name);
  return ok ? 0 : 1;
}

#endif  // MGB_EXAMPLES_RUNTIME_EXAMPLE_CHECK_H
