/* Host-side min()/max() overloads for mgb-rewrite's parse only. nvcc's math_functions.hpp
 * declares them __host__ __device__, so host code such as `max(x, 1.0f)` compiles with nvcc;
 * clang's CUDA wrapper makes the same header device-only, and the parse would fail. These
 * host twins give clang what nvcc gives; they are never compiled into a program. */
#ifndef MGB_HOST_MATH_H
#define MGB_HOST_MATH_H
#pragma clang system_header
#if defined(__cplusplus) && defined(__CUDA__)
#define MGB_HOST_MINMAX(R, A, B)                                                                   \
  static inline __host__ R min(const A a, const B b) { return (R)a < (R)b ? (R)a : (R)b; }         \
  static inline __host__ R max(const A a, const B b) { return (R)a > (R)b ? (R)a : (R)b; }
MGB_HOST_MINMAX(int, int, int)
MGB_HOST_MINMAX(unsigned int, unsigned int, unsigned int)
MGB_HOST_MINMAX(unsigned int, int, unsigned int)
MGB_HOST_MINMAX(unsigned int, unsigned int, int)
MGB_HOST_MINMAX(long int, long int, long int)
MGB_HOST_MINMAX(unsigned long int, unsigned long int, unsigned long int)
MGB_HOST_MINMAX(unsigned long int, long int, unsigned long int)
MGB_HOST_MINMAX(unsigned long int, unsigned long int, long int)
MGB_HOST_MINMAX(long long int, long long int, long long int)
MGB_HOST_MINMAX(unsigned long long int, unsigned long long int, unsigned long long int)
MGB_HOST_MINMAX(unsigned long long int, long long int, unsigned long long int)
MGB_HOST_MINMAX(unsigned long long int, unsigned long long int, long long int)
MGB_HOST_MINMAX(float, float, float)
MGB_HOST_MINMAX(double, double, double)
MGB_HOST_MINMAX(double, float, double)
MGB_HOST_MINMAX(double, double, float)
#undef MGB_HOST_MINMAX
#endif
#endif
