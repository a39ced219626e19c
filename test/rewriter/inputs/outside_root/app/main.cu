// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- -I%S/../common 2> %t.stderr
// RUN: FileCheck %S/../common/launch_helpers.h --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --implicit-check-not=cudaLaunchCooperativeKernel
// RUN: %strip-checks %t/first/main.cu | FileCheck %s
// RUN: %golden %t %s -- -I%S/../common
#include <cstdio>
// The header's cudaSetDevice is renamed by a #define placed before the header is included; the
// calls spelled here are renamed in place (no #define for them).
// CHECK: {{^}}#include <mgb/mgb.h>
// CHECK-NEXT: /* mgb: cudaSetDevice is called where mgb-rewrite does not edit it
// CHECK-NEXT: {{^}}#define cudaSetDevice mgb_cudaSetDevice
// The header's launch cannot be rewritten: the program binds its memory eagerly, so that no
// stand-in reaches that launch (it printed FAIL on the H100 before).
// CHECK-NEXT: /* mgb: this file holds code mgb-rewrite could not route
// CHECK-NEXT: {{^}}#include <mgb/unseen_tu.h>
// CHECK-NOT: {{^}}#define cudaMalloc
#include "launch_helpers.h"

__global__ void coop_scale(int *p) { p[threadIdx.x] *= 2; }

int main() {
  const int n = 256;
  int host[n] = {0};
  pick_device();
  int *dev;
  // CHECK: mgb_cudaMalloc(&dev, n * sizeof(int));
  cudaMalloc(&dev, n * sizeof(int));
  cudaMemcpy(dev, host, n * sizeof(int), cudaMemcpyHostToDevice);
  add_one_on_device(dev, n);
  void *args[] = {&dev};
  // A cooperative launch goes to libmgb's twin, which binds what the values in args name.
  // CHECK: {{^ *}}mgb_cudaLaunchCooperativeKernel((void *)coop_scale, dim3(1), dim3(n), args, 0, 0);
  cudaLaunchCooperativeKernel((void *)coop_scale, dim3(1), dim3(n), args, 0, 0);
  cudaMemcpy(host, dev, n * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(dev);
  int bad = 0;
  for (int i = 0; i < n; ++i)
    bad += host[i] != 2;
  printf("%s\n", bad ? "FAIL" : "PASS");
  return bad != 0;
}
