/* Runtime functions CUDA 12/13 removed (deprecated since CUDA 4) that older CUDA programs still
 * call. Declared here, with their old signatures, only for mgb-rewrite's host-side parse; the
 * rewriter renames every call to what replaced it (cudaThreadSynchronize -> the twin of
 * cudaDeviceSynchronize), so the rewritten source compiles with today's nvcc. */
#ifndef MGB_REMOVED_CUDA_API_H
#define MGB_REMOVED_CUDA_API_H
#pragma clang system_header
#include <cuda_runtime_api.h>
#ifdef __cplusplus
extern "C" {
#endif
cudaError_t cudaThreadSynchronize(void);
cudaError_t cudaThreadExit(void);
cudaError_t cudaThreadSetLimit(enum cudaLimit limit, size_t value);
cudaError_t cudaThreadGetLimit(size_t *value, enum cudaLimit limit);
cudaError_t cudaThreadSetCacheConfig(enum cudaFuncCache config);
cudaError_t cudaThreadGetCacheConfig(enum cudaFuncCache *config);
#ifdef __cplusplus
}
#endif
#endif
