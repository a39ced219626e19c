// Reports GPU work done through thrust, which mgb cannot see: thrust::device_vector (and
// device_malloc) take device memory through cudaMalloc calls inside CUDA's own headers, and thrust
// algorithms on device data launch their kernels there. Where ApiCallRenamer routed those
// allocations to libmgb (EditSet::holdsLibraryMemory), the program binds its memory eagerly and
// one warning per file says so; otherwise each container and call is reported: that memory is
// not reserved and those kernels are not placed by mgbd.
#ifndef MGB_REWRITER_THRUSTUSEREPORTER_H
#define MGB_REWRITER_THRUSTUSEREPORTER_H

#include "EditSet.h"
#include "RewriteDiagnostics.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <string>

namespace mgb::rewriter {

class ThrustUseReporter : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  ThrustUseReporter(EditSet &edits, RewriteDiagnostics &diagnostics)
      : edits_(edits), diagnostics_(diagnostics) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &finder);
  void run(const clang::ast_matchers::MatchFinder::MatchResult &result) override;

private:
  void warn(clang::SourceLocation at, const clang::ASTContext &Ctx, const std::string &what);
  // True when the file binds eagerly for thrust's memory (reported once, at its first use).
  bool reportedEagerBinding(clang::SourceLocation at, const clang::ASTContext &Ctx);
  EditSet &edits_;
  RewriteDiagnostics &diagnostics_;
  std::set<std::string> eagerFilesReported_;
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_THRUSTUSEREPORTER_H
