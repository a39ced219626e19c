#pragma once
#include <cuda_runtime.h>

// Scales x[0..n) by `factor` on the device the caller's buffer is on.
void launch_scale(float *x, int n, float factor, cudaStream_t stream);

// Allocates n floats, scales them on the GPU and returns the last one (host-only callers).
float scale_round_trip(int n, float factor);
