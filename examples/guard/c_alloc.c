/* A C program that allocates device memory from a .c file through the shared CUDA runtime
 * (libcudart.so), as C code bases and language bindings do: no kernel of its own, no nvcc.
 * Usage: guard_c_alloc MIB HOLD_MS */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  const size_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 256;
  const int hold_ms = argc > 2 ? atoi(argv[2]) : 0;
  void *device = NULL;
  cudaError_t error = cudaMalloc(&device, mib << 20);
  if (error != cudaSuccess) {
    printf("guard_c_alloc: cudaMalloc failed: %s\n", cudaGetErrorString(error));
    return 1;
  }
  unsigned char probe = 0;
  cudaMemset(device, 7, mib << 20);
  cudaMemcpy(&probe, (unsigned char *)device + (mib << 20) - 1, 1, cudaMemcpyDeviceToHost);
  if (hold_ms > 0) usleep((useconds_t)hold_ms * 1000);
  cudaFree(device);
  printf("guard_c_alloc: %zu MiB ok (%u)\n", mib, probe);
  return probe == 7 ? 0 : 1;
}
