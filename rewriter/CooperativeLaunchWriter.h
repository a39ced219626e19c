// cudaLaunchCooperativeKernel(k, grid, block, args, ...) has no mgb twin: its argument values are
// reached through `args`, so stand-ins from a lazily bound allocation reached the kernel as they
// were (HeCBench-style grid-sync reductions whose buffers come from a helper). When `args` is a
// local array spelled `{&a, &b, ...}`, the call is routed like a lazy launch: mgb_prepare binds
// the stand-ins among a, b, ... and the call gets an array of their translated values. Any other
// form is reported on stderr.
#ifndef MGB_REWRITER_COOPERATIVELAUNCHWRITER_H
#define MGB_REWRITER_COOPERATIVELAUNCHWRITER_H

#include "EditSet.h"
#include "RewriteDiagnostics.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "llvm/Support/raw_ostream.h"

namespace mgb::rewriter {

class CooperativeLaunchWriter : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  CooperativeLaunchWriter(EditSet &edits, RewriteDiagnostics &diagnostics)
      : edits_(edits), diagnostics_(diagnostics) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &finder);
  void run(const clang::ast_matchers::MatchFinder::MatchResult &result) override;

private:
  EditSet &edits_;
  RewriteDiagnostics &diagnostics_;
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_COOPERATIVELAUNCHWRITER_H
