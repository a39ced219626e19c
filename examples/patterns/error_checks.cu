// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/error_checks.cu | FileCheck %s
// RUN: %golden %t %s
// Pattern: a program that checks CUDA's error state after every call it makes (an error-checking
// macro around cudaGetLastError), reads its device back with cudaGetDevice, and makes errors of
// its own on purpose. It prints one line per call: the call's result and the last error CUDA holds
// after it. Rewritten, every line must be the same: libmgb's own CUDA calls (placement, replays,
// queries) never show in the program's error state or device (docs/runtime.md, "CUDA state the
// program sees"). Exits 0 with PASS when each result and last error is what CUDA defines.
// CHECK: {{^}}#include <mgb/mgb.h>
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

__constant__ float scale;

__global__ void scale_by(float *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] *= scale;
}

static int failures = 0;

// After each call: what cudaPeekAtLastError and then cudaGetLastError (which resets it) say.
// CHECK-LABEL: static void step(
// CHECK: cudaError_t peek = mgb_cudaPeekAtLastError();
// CHECK-NEXT: cudaError_t last = mgb_cudaGetLastError();
static void step(const char *what, cudaError_t result, cudaError_t expected_result,
                 cudaError_t expected_last) {
  cudaError_t peek = cudaPeekAtLastError();
  cudaError_t last = cudaGetLastError();
  printf("%-34s -> %-30s last %s\n", what, cudaGetErrorName(result), cudaGetErrorName(last));
  if (result != expected_result || last != expected_last || peek != last) {
    printf("  expected %s, last %s (peek said %s)\n", cudaGetErrorName(expected_result),
           cudaGetErrorName(expected_last), cudaGetErrorName(peek));
    ++failures;
  }
}
// A call that must succeed and leave no error.
static void ok(const char *what, cudaError_t result) {
  step(what, result, cudaSuccess, cudaSuccess);
}

int main() {
  const int n = 1024;
  ok("start", cudaSuccess);
  int count = 0;
  ok("cudaGetDeviceCount", cudaGetDeviceCount(&count));
  int device = -1;
  // CHECK: ok("cudaGetDevice", mgb_cudaGetDevice(&device));
  ok("cudaGetDevice", cudaGetDevice(&device));
  printf("device %d (CUDA's default is 0)\n", device);
  if (device != 0)
    ++failures;
  ok("cudaSetDevice(last)", cudaSetDevice(count - 1));
  ok("cudaGetDevice", cudaGetDevice(&device));
  printf("device is the last one: %s\n", device == count - 1 ? "yes" : "no");
  if (device != count - 1)
    ++failures;
  step("cudaSetDevice(count)", cudaSetDevice(count), cudaErrorInvalidDevice,
       cudaErrorInvalidDevice);
  ok("cudaGetDevice", cudaGetDevice(&device));
  if (device != count - 1)
    ++failures;
  cudaDeviceProp prop;
  ok("cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, device));

  cudaStream_t stream;
  cudaEvent_t start, stop;
  float *data, *copy, host[n], back[n];
  for (int i = 0; i < n; ++i)
    host[i] = (float)i;
  ok("cudaStreamCreate", cudaStreamCreate(&stream));
  ok("cudaEventCreate", cudaEventCreate(&start));
  ok("cudaEventCreateWithFlags", cudaEventCreateWithFlags(&stop, cudaEventDefault));
  ok("cudaMalloc", cudaMalloc(&data, n * sizeof(float)));
  ok("cudaMalloc", cudaMalloc(&copy, n * sizeof(float)));
  ok("cudaMemset", cudaMemset(copy, 0, n * sizeof(float)));
  ok("cudaMemcpy HtoD", cudaMemcpy(data, host, sizeof host, cudaMemcpyHostToDevice));
  float factor = 2.0f;
  ok("cudaMemcpyToSymbol", cudaMemcpyToSymbol(scale, &factor, sizeof factor));
  ok("cudaEventRecord", cudaEventRecord(start, stream));
  scale_by<<<(n + 255) / 256, 256, 0, stream>>>(data, n);
  ok("launch", cudaSuccess);
  ok("cudaEventRecord", cudaEventRecord(stop, stream));
  ok("cudaStreamWaitEvent", cudaStreamWaitEvent(stream, stop, 0));
  ok("cudaEventSynchronize", cudaEventSynchronize(stop));
  float ms = 0;
  ok("cudaEventElapsedTime", cudaEventElapsedTime(&ms, start, stop));
  ok("cudaEventQuery (done)", cudaEventQuery(stop));
  ok("cudaMemcpyAsync DtoD", cudaMemcpyAsync(copy, data, sizeof host, cudaMemcpyDeviceToDevice,
                                             stream));
  ok("cudaMemsetAsync", cudaMemsetAsync(data, 0, sizeof host, stream));
  ok("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  ok("cudaStreamQuery (done)", cudaStreamQuery(stream));
  ok("cudaDeviceSynchronize", cudaDeviceSynchronize());
  ok("cudaMemcpy DtoH", cudaMemcpy(back, copy, sizeof back, cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += back[i] != 2.0f * (float)i;
  printf("%d of %d wrong\n", wrong, n);
  failures += wrong != 0;
  float read = 0;
  ok("cudaMemcpyFromSymbol", cudaMemcpyFromSymbol(&read, scale, sizeof read));
  failures += read != factor;
  ok("cudaGetDevice", cudaGetDevice(&device));
  failures += device != count - 1;  // the program's own device, wherever its work ran

  // Errors of the program's own: the next cudaGetLastError reports each, after successful calls
  // in between, and only once.
  float not_device[4];
  cudaError_t freed = cudaFree(not_device);  // a host pointer
  printf("cudaFree(host pointer) -> %s\n", cudaGetErrorName(freed));
  failures += freed == cudaSuccess;
  step("cudaMemcpy HtoD after it",
       cudaMemcpy(data, host, sizeof host, cudaMemcpyHostToDevice), cudaSuccess, freed);
  ok("cudaMemcpy HtoD", cudaMemcpy(data, host, sizeof host, cudaMemcpyHostToDevice));
  // More threads than a block may have: the launch fails, and cudaGetLastError says so (CUDA 13
  // on an H100 says cudaErrorInvalidValue), also after a later successful call.
  scale_by<<<1, 4096, 0, stream>>>(data, n);
  cudaError_t launch = cudaGetLastError();
  printf("launch of 4096 threads: %s\n", cudaGetErrorName(launch));
  failures += launch == cudaSuccess;
  scale_by<<<1, 4096, 0, stream>>>(data, n);
  step("cudaMemset after a bad launch", cudaMemset(copy, 0, sizeof host), cudaSuccess, launch);
  cudaEvent_t never;
  ok("cudaEventCreate", cudaEventCreate(&never));
  step("cudaEventElapsedTime (unrecorded)", cudaEventElapsedTime(&ms, never, never),
       cudaErrorInvalidResourceHandle, cudaErrorInvalidResourceHandle);
  ok("cudaEventDestroy", cudaEventDestroy(never));
  ok("cudaEventDestroy", cudaEventDestroy(start));
  ok("cudaEventDestroy", cudaEventDestroy(stop));
  ok("cudaStreamDestroy", cudaStreamDestroy(stream));
  ok("cudaFree", cudaFree(data));
  ok("cudaFree", cudaFree(copy));
  ok("end", cudaSuccess);
  printf("%s error_checks\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
