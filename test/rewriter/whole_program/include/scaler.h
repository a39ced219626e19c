/* The program's public header (as darknet's include/darknet.h): C and C++ see the same API. With
 * -DGPU it pulls in the CUDA runtime, as darknet.h does for every source of the program. */
#ifndef SCALER_H
#define SCALER_H

#include <stddef.h>

#ifdef GPU
#include "cuda_runtime.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif
float *cuda_make_array(const float *x, size_t n);
void cuda_push_array(float *x_gpu, const float *x, size_t n);
void cuda_pull_array(float *x_gpu, float *x, size_t n);
void cuda_free(float *x_gpu);
void scal_gpu(int n, float alpha, float *x);
void axpy_gpu(int n, float alpha, const float *x, float *y);
float sum_on_gpu(const float *x, int n);
#ifdef __cplusplus
}
#endif

#endif
