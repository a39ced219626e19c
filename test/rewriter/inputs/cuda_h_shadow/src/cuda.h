/* The project's own cuda.h, found first on -Isrc (as darknet's src/cuda.h is): clang's CUDA
 * wrapper must still get the toolkit's cuda.h (CUDA_VERSION), the project's sources this one. */
#ifndef PROJECT_CUDA_H
#define PROJECT_CUDA_H

#include "cuda_runtime.h"
#include "cublas_v2.h"

#define BLOCK 512

#ifdef __cplusplus
extern "C" {
#endif
void check_error(cudaError_t status);
dim3 cuda_gridsize(size_t n);
#ifdef __cplusplus
}
#endif

#endif
