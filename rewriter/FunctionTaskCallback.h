// Plans and writes the tasks of every function (and lambda) defined in an editable file.
#ifndef MGB_REWRITER_FUNCTIONTASKCALLBACK_H
#define MGB_REWRITER_FUNCTIONTASKCALLBACK_H

#include "EditSet.h"
#include "RewriteDiagnostics.h"

#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

namespace mgb::rewriter {

class FunctionTaskCallback : public clang::ast_matchers::MatchFinder::MatchCallback {
public:
  FunctionTaskCallback(EditSet &edits, llvm::raw_ostream &explain, RewriteDiagnostics &diagnostics)
      : edits_(edits), explain_(explain), diagnostics_(diagnostics) {}
  void registerMatchers(clang::ast_matchers::MatchFinder &finder);
  void run(const clang::ast_matchers::MatchFinder::MatchResult &result) override;
  void onStartOfTranslationUnit() override { edits_.resetTaskNumbers(); }

private:
  EditSet &edits_;
  llvm::raw_ostream &explain_;
  RewriteDiagnostics &diagnostics_;
  std::set<std::string> explained_; // functions of shared headers are explained once
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_FUNCTIONTASKCALLBACK_H
