#include <cstdio>
#include <cuda_runtime.h>

// A source saved with a UTF-8 byte order mark, a Latin-1 byte in a comment (0xE9, not UTF-8,
// which nvcc takes in comments only): café.
// The probe includes go after the mark (nvcc reads a mark only as a file's first bytes; before
// the fix they went in front of it and nvcc failed), and every other byte survives the rewrite.
__global__ void fill(float *x, float v) { x[threadIdx.x] = v; }

int main() {
  float *d;
  cudaMalloc(&d, 32 * sizeof(float));
  fill<<<1, 32>>>(d, 1.0f);
  cudaFree(d);
  std::printf("cafÃ© %d\n", __LINE__);
  return 0;
}
// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// The mark, then the includes on the same first line (the rest: CHECK below):
// RUN: head -c 16 %t/first/byte_order_mark.cu | od -An -c | tr -s ' ' | FileCheck %s --check-prefix=BOM
// BOM: 357 273 277 # i n c l u d e < c u d
// RUN: %strip-check-comments %t/first/byte_order_mark.cu | FileCheck %s
// CHECK: #include <mgb/mgb.h>
// CHECK-NEXT: #line 1 "{{.*}}byte_order_mark.cu"
// CHECK-NEXT: #include <cstdio>
// CHECK: mgb_cudaMalloc
// The lines holding the Latin-1 byte, byte for byte:
// RUN: LC_ALL=C grep -a caf %s > %t/original.caf
// RUN: LC_ALL=C grep -a caf %t/first/byte_order_mark.cu > %t/rewritten.caf
// RUN: cmp %t/original.caf %t/rewritten.caf
// RUN: %golden %t %s
