// For the parse only (mgb-rewrite puts rewriter/shim first on the include path): the OpenMP
// header of nvcc's host GCC, found last through -idirafter. GCC 11+ marks its allocators
// `__attribute__((__malloc__, __malloc__ (omp_free)))`, the second form is GCC-only and clang
// rejects it: the argument form is dropped while the header is read.
#pragma once
#define __malloc__(...)
#include_next <omp.h>
#undef __malloc__
