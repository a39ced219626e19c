// A header the rewrite leaves alone (no CUDA call in it): the rewritten copy of main.cu finds it
// beside itself in the drivers' mirror tree, yet its __FILE__ must name it as the original
// compile does.
#ifndef WHERE_H
#define WHERE_H
#include <cstdio>
#define mgb_site_marker(file, line) std::printf("%s:%d\n", file, line)
inline void where_host() { mgb_site_marker(__FILE__, __LINE__); }
__device__ inline void where_device() { mgb_site_marker(__FILE__, __LINE__); }
// Warnings here, from the host compiler and from nvcc's device front end, must name this header
// as the original compile does too (not the mirror's /tmp/mgb-nvcc.XXXX/...).
[[deprecated("where_old is old")]] inline int where_old() { return 0; }
inline int where_uses_old() { return where_old(); }
__device__ inline int where_unreferenced() {
  int declared_but_never_referenced;
  return 0;
}
#endif
