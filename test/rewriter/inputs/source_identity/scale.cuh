// A project header the rewrite edits (source_identity/main.cu's test): its copy must keep the
// original's __FILE__ (the spelling the #include resolved to) and every __LINE__.
#pragma once
#include <cstdio>
#include <cuda_runtime.h>

#define SITE() mgb_site_marker(__FILE__, __LINE__)
void mgb_site_marker(const char *, int);

__global__ void scale(float *x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= a;
}

// A pointer parameter: the launch is prepared lazily (text inserted before it).
inline void scale_on_device(float *d, int n, float a) {
  SITE();
  scale<<<(n + 255) / 256, 256>>>(d, n, a);
  SITE();
}
