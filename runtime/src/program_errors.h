// The program's CUDA last error, kept apart from libmgb's own calls.
//
// CUDA keeps one last error per host thread: a failing runtime call sets it to its code, a
// successful one leaves it, cudaGetLastError returns and resets it, cudaPeekAtLastError returns
// it. cudaErrorNotReady (a query of unfinished work) is no failure and leaves it too (measured on
// an H100, CUDA 13, driver 580: cudaStreamQuery/cudaEventQuery answer it, cudaGetLastError then
// says cudaSuccess). libmgb calls CUDA for itself inside the program's calls (placement, queries,
// replays, attribute lookups that end in an error on purpose), and those calls would overwrite or
// invent the program's error. libmgb cannot set CUDA's slot to a code of its choosing, so it keeps
// the program's pending error itself, per thread, and the rewriter renames cudaGetLastError and
// cudaPeekAtLastError to twins that read it (docs/runtime.md, "CUDA state the program sees").
#ifndef MGB_RUNTIME_SRC_PROGRAM_ERRORS_H
#define MGB_RUNTIME_SRC_PROGRAM_ERRORS_H

#include <cuda_runtime_api.h>

#include "cuda_api.h"

namespace mgb::runtime {

// Around every libmgb entry point. On entry it takes the program's last error (CUDA's slot, where
// the program's own calls since the previous entry left theirs, else the pending one) and clears
// CUDA's slot; on exit it clears whatever libmgb's calls left there and makes the program's error
// the entry point's result when CUDA would have kept it (Return), else what it was on entry. Nested
// scopes (an entry point reached from another) leave the work to the outermost.
// Whether CUDA leaves `result` as the thread's last error.
constexpr bool SetsLastError(cudaError_t result) {
  return result != cudaSuccess && result != cudaErrorNotReady;
}

class ProgramErrorScope {
 public:
  explicit ProgramErrorScope(CudaApi &api);
  ~ProgramErrorScope();
  ProgramErrorScope(const ProgramErrorScope &) = delete;
  ProgramErrorScope &operator=(const ProgramErrorScope &) = delete;

  // For a twin of a CUDA call: its result, which CUDA would have left as the last error.
  cudaError_t Return(cudaError_t result) {
    result_ = result;
    return result;
  }

 private:
  CudaApi &api_;
  bool outermost_;
  cudaError_t on_entry_ = cudaSuccess;
  cudaError_t result_ = cudaSuccess;
};

// mgb_cudaGetLastError: CUDA's slot when it holds an error (the program's own calls and kernel
// launches since libmgb's last entry point are more recent), else the pending error; both reset.
cudaError_t ProgramGetLastError(CudaApi &api);
// mgb_cudaPeekAtLastError: the same, nothing reset.
cudaError_t ProgramPeekAtLastError(CudaApi &api);

}  // namespace mgb::runtime

#endif  // MGB_RUNTIME_SRC_PROGRAM_ERRORS_H
