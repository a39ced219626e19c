/* The program's own cuda.h (darknet's src/cuda.h), found before the toolkit's on -Isrc. */
#ifndef PROGRAM_CUDA_H
#define PROGRAM_CUDA_H

#include "scaler.h"

#define BLOCK 256

#ifdef __cplusplus
extern "C" {
#endif
void check_error(cudaError_t status);
int cuda_blocks(size_t n);
#ifdef __cplusplus
}
#endif

#endif
