// Streams passed where libmgb does not look. Outside a task, mgb_cudaStreamCreate hands out a
// stand-in handle (the lazy layer creates the real stream on the GPU mgbd picks). Calls with an
// mgb_ twin and kernel launches (mgb_real_stream) translate it; a CUDA runtime function without
// a twin (cudaStreamAddCallback, cudaStreamAttachMemAsync, cudaLaunchHostFunc) or a CUDA library
// (cublasSetStream, cufftSetStream) would get the stand-in itself and fail: such arguments are
// wrapped in mgb_real_stream().
#ifndef MGB_REWRITER_FOREIGNSTREAMWRAPPER_H
#define MGB_REWRITER_FOREIGNSTREAMWRAPPER_H

#include "EditSet.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

namespace mgb::rewriter {

class ForeignStreamWrapper : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  explicit ForeignStreamWrapper(EditSet &edits) : edits_(edits) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &finder);
  void run(const clang::ast_matchers::MatchFinder::MatchResult &result) override;

private:
  EditSet &edits_;
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_FOREIGNSTREAMWRAPPER_H
