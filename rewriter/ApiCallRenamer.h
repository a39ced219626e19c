// Renames calls of CUDA runtime functions to their mgb_ twins (callee token only).
#ifndef MGB_REWRITER_APICALLRENAMER_H
#define MGB_REWRITER_APICALLRENAMER_H

#include "EditSet.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"

namespace mgb::rewriter {

class ApiCallRenamer : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  explicit ApiCallRenamer(EditSet &edits) : edits_(edits) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &finder);
  void run(const clang::ast_matchers::MatchFinder::MatchResult &result) override;

private:
  EditSet &edits_;
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_APICALLRENAMER_H
