// Parse-only: the C headers nvcc's implicit cuda_runtime.h brings into every .cu file
// (crt/common_functions.h includes them), so that a program calling time() or memcpy() without
// its own #include parses as nvcc compiles it. Clang's CUDA wrapper headers do not include them.
#ifndef MGB_NVCC_IMPLICIT_H
#define MGB_NVCC_IMPLICIT_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#endif
