// Reports GPU work the rewrite cannot bind, so that nothing runs unmanaged silently: launches in
// project headers outside --root (not rewritten), launches through CUDA entry points that have
// no mgb twin (cooperative launches, cudaLaunchKernelEx, graphs), and device allocations libmgb
// cannot count (CUDA arrays, cudaMalloc3D, stream-ordered cudaMallocAsync).
#ifndef MGB_REWRITER_UNMANAGEDLAUNCHREPORTER_H
#define MGB_REWRITER_UNMANAGEDLAUNCHREPORTER_H

#include "EditSet.h"
#include "RewriteDiagnostics.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <string>

namespace mgb::rewriter {

class UnmanagedLaunchReporter : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  UnmanagedLaunchReporter(EditSet &edits, RewriteDiagnostics &diagnostics)
      : edits_(edits), diagnostics_(diagnostics) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &finder);
  void run(const clang::ast_matchers::MatchFinder::MatchResult &result) override;

private:
  EditSet &edits_;
  RewriteDiagnostics &diagnostics_;
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_UNMANAGEDLAUNCHREPORTER_H
