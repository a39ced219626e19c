// Parse-only: the C and C++ headers nvcc's implicit cuda_runtime.h brings into every .cu file
// (crt/common_functions.h and crt/math_functions.h include them), so that a program calling
// time(), memcpy() or a host isfinite(float) without its own #include parses as nvcc compiles
// it. Clang's CUDA wrapper headers do not include them (its <cmath> wrapper declares only the
// device overloads and std::, so `isfinite(x)` in host code found no function: llm.c).
#ifndef MGB_NVCC_IMPLICIT_H
#define MGB_NVCC_IMPLICIT_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>
#ifdef __cplusplus
#include <cmath>
#include <cstdlib>
#endif
#endif
