// A host program whose only CUDA calls are rewritten (RunBuildsProject.cmake links it through
// mgb-c++ with -Wl,--as-needed -lcudart, as Debian's gcc links by default): the linker must not
// drop the program's cudart before libmgb, whose own cudart calls need it.
#include <cuda_runtime.h>

#include <cstdio>

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  void *p = nullptr;
  cudaError_t e = cudaMalloc(&p, 256);
  if (e == cudaSuccess) cudaFree(p);
  std::printf("%d device(s)\n", count);
  return 0;
}
