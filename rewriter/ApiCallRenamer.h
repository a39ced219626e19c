// Renames calls of CUDA runtime functions to their mgb_ twins (callee token only), and the
// functions where they are named as values (a deleter `&cudaFree`).
#ifndef MGB_REWRITER_APICALLRENAMER_H
#define MGB_REWRITER_APICALLRENAMER_H

#include "EditSet.h"
#include "RewriteDiagnostics.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

#include <set>

namespace mgb::rewriter {

class ApiCallRenamer : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  ApiCallRenamer(EditSet &edits, RewriteDiagnostics &diagnostics)
      : edits_(edits), diagnostics_(diagnostics) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &finder);
  void run(const clang::ast_matchers::MatchFinder::MatchResult &result) override;
  void onStartOfTranslationUnit() override { callees_.clear(); }

private:
  // Replaces the name token at nameLoc by name's twin; false when it could not be edited there
  // (a `#define` fallback is recorded instead).
  bool renameToken(clang::SourceLocation nameLoc, llvm::StringRef name,
                   const clang::ast_matchers::MatchFinder::MatchResult &result);

  // Records a `#define name twin` at the top of `file` (its copy), for calls not renamed in place.
  void renameByDefine(clang::FileID file, llvm::StringRef name, const clang::SourceManager &SM);

  // True when a system header outside CUDA's runtime headers (thrust, CUB) allocates or frees
  // device memory with the runtime function `name` at `at`.
  static bool allocatesInLibraryHeader(clang::SourceLocation at, llvm::StringRef name,
                                       const clang::SourceManager &SM);

  // A call of a runtime function this toolkit no longer has (declared for the parse only, by
  // shim/mgb_removed_cuda_api.h): renamed, it compiles where nvcc rejects the original, which
  // the build must say.
  void warnIfRemoved(const clang::CallExpr *call, llvm::StringRef name,
                     const clang::ASTContext &Ctx);

  EditSet &edits_;
  RewriteDiagnostics &diagnostics_;
  std::set<const clang::Expr *> callees_; // callees of the calls seen so far
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_APICALLRENAMER_H
