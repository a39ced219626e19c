// Device pointers stored into CUDA's own structs (`res.res.linear.devPtr = d_buf;` before
// cudaCreateTextureObject, a cudaMemcpy3DParms field): CUDA reads them there, where libmgb does
// not look, so the stored value is made real at the store: `mgb_arg(d_buf)` (C: mgb_real_ptr),
// which binds a stand-in to the thread's task first.
#ifndef MGB_REWRITER_CUDASTRUCTPOINTERWRITER_H
#define MGB_REWRITER_CUDASTRUCTPOINTERWRITER_H

#include "EditSet.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

namespace mgb::rewriter {

class CudaStructPointerWriter : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  explicit CudaStructPointerWriter(EditSet &edits) : edits_(edits) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &finder);
  void run(const clang::ast_matchers::MatchFinder::MatchResult &result) override;

private:
  EditSet &edits_;
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_CUDASTRUCTPOINTERWRITER_H
