// Source identity: the rewrite inserts probes (several lines of text) before and after the task
// below and edits the header scale.cuh; __FILE__ and __LINE__ must still expand to what they do
// in the original compile, in the source and in the header. Each SITE() is a marker whose
// expansion `nvcc -E` shows for the original and for the rewrite; the two lists must be equal.
// RUN: rm -rf %t && mkdir -p %t
// RUN: cd %S/.. && %mgb-rewrite --root %S -o %t/first source_identity/main.cu --
// RUN: %strip-check-comments %t/first/main.cu | FileCheck %s
// RUN: cd %S/.. && %nvcc -E source_identity/main.cu | grep -o 'mgb_site_marker(".*", [0-9]*)' > %t/original.sites
// RUN: %nvcc -E -I%runtime-include %t/first/main.cu | grep -o 'mgb_site_marker(".*", [0-9]*)' > %t/rewritten.sites
// RUN: FileCheck %s --check-prefix=SITES --input-file=%t/original.sites
// RUN: diff %t/original.sites %t/rewritten.sites
// RUN: %golden %t %s
#include "scale.cuh"
#include <cstdlib>

// An error macro as people write them: it prints where it was used.
#define CHECK(call)                                                                          \
  do {                                                                                       \
    cudaError_t err = (call);                                                                \
    if (err != cudaSuccess) {                                                                \
      SITE();                                                                                \
      std::fprintf(stderr, "%s(%d): %s\n", __FILE__, __LINE__, cudaGetErrorString(err));     \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

// The includes go after the leading comments; line 13 is `#include "scale.cuh"`.
// CHECK: #include <mgb/mgb.h>
// CHECK: #line 13 "source_identity/main.cu"
// CHECK-NEXT: #include "scale.cuh"
int main() {
  const int n = 1 << 20;
  float *d;
  SITE();
  // CHECK: mgb_task_begin
  // CHECK-NEXT: #line [[@LINE+1]] "source_identity/main.cu"
  CHECK(cudaMalloc(&d, n * sizeof(float)));
  CHECK(cudaMemset(d, 0, n * sizeof(float)));
  scale<<<(n + 255) / 256, 256>>>(d, n, 2.0f);
  SITE();
  scale_on_device(d, n, 1.0f);
  CHECK(cudaDeviceSynchronize());
  // CHECK: mgb_task_end
  // CHECK-NEXT: #line [[@LINE+2]] "source_identity/main.cu"
  CHECK(cudaFree(d));
  SITE();
  return 0;
}
// Every marker of the original compile (the header's by its #include's spelling), in order:
// SITES: mgb_site_marker("source_identity/scale.cuh", 18)
// SITES-NEXT: mgb_site_marker("source_identity/scale.cuh", 20)
// SITES-NEXT: mgb_site_marker("source_identity/main.cu", 34)
// SITES-NEXT: mgb_site_marker("source_identity/main.cu", 37)
// SITES-NEXT: mgb_site_marker("source_identity/main.cu", 38)
// SITES-NEXT: mgb_site_marker("source_identity/main.cu", 40)
// SITES-NEXT: mgb_site_marker("source_identity/main.cu", 42)
// SITES-NEXT: mgb_site_marker("source_identity/main.cu", 45)
// SITES-NEXT: mgb_site_marker("source_identity/main.cu", 46)
// SITES-NOT: mgb_site_marker
