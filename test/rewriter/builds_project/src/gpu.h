#ifndef BUILDS_GPU_H
#define BUILDS_GPU_H
#ifdef __cplusplus
extern "C" {
#endif
float *gpu_alloc(int n);                 /* helper.c (C99) */
void gpu_release(float *p);              /* helper.c */
int gpu_pull_sum(const float *p, int n); /* helper.c */
#ifdef __cplusplus
}
void gpu_fill(float *p, int n, float v);        // kernels.cu
void gpu_add(float *p, const float *q, int n);  // kernels.cu
void gpu_scale(float *p, int n, float f);       // scale.cpp (-x cu after the input)
float *gpu_scratch(int n);                      // buffers.cpp (C++11)
void gpu_scratch_release(float *p);             // buffers.cpp
float *gpu_staging(int n);                      // pinned.cpp (a .cpp compiled by $(NVCC))
#endif
#endif
