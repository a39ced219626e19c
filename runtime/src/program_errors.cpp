#include "program_errors.h"

namespace mgb::runtime {
namespace {

// Per thread, as CUDA's own slot. Process-wide, not per Runtime: one program, one CUDA runtime.
struct ThreadErrors {
  cudaError_t pending = cudaSuccess;  // the program's last error while CUDA's slot is libmgb's
  int depth = 0;                      // open scopes on this thread
};
thread_local ThreadErrors thread_errors;

}  // namespace

ProgramErrorScope::ProgramErrorScope(CudaApi &api)
    : api_(api), outermost_(thread_errors.depth++ == 0) {
  if (!outermost_) return;
  cudaError_t slot = api_.GetLastError();
  on_entry_ = slot != cudaSuccess ? slot : thread_errors.pending;
}

ProgramErrorScope::~ProgramErrorScope() {
  --thread_errors.depth;
  if (!outermost_) return;
  (void)api_.GetLastError();  // what libmgb's own calls left: never the program's
  thread_errors.pending = SetsLastError(result_) ? result_ : on_entry_;
}

cudaError_t ProgramGetLastError(CudaApi &api) {
  cudaError_t slot = api.GetLastError();
  cudaError_t last = slot != cudaSuccess ? slot : thread_errors.pending;
  thread_errors.pending = cudaSuccess;
  return last;
}

cudaError_t ProgramPeekAtLastError(CudaApi &api) {
  cudaError_t slot = api.PeekAtLastError();
  return slot != cudaSuccess ? slot : thread_errors.pending;
}

}  // namespace mgb::runtime
