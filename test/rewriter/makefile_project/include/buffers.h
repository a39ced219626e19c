#pragma once
#include <cstddef>
// Device buffers allocated in one translation unit and used by kernels launched in others.
float *device_buffer(size_t n);
void release_buffer(float *p);
void scale_on_device(float *p, int n);
void offset_on_device(float *p, int n, float by);
int run_pipeline(int n); // returns the number of wrong elements
