// mgb-rewrite's own warnings (code it cannot manage finely, and why), printed as Clang prints its
// diagnostics: file:line:col, the source line and a caret. Each is reported once, however many
// translation units include the code; --warnings-as-errors turns them into errors.
#ifndef MGB_REWRITER_REWRITEDIAGNOSTICS_H
#define MGB_REWRITER_REWRITEDIAGNOSTICS_H

#include "clang/AST/ASTContext.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <set>
#include <string>

namespace mgb::rewriter {

class RewriteDiagnostics {
public:
  explicit RewriteDiagnostics(llvm::raw_ostream &out);
  ~RewriteDiagnostics();

  void setWarningsAsErrors(bool on) { warningsAsErrors_ = on; }

  // Reports `message` at the expansion location of `at` in Ctx's translation unit.
  void warn(clang::SourceLocation at, const clang::ASTContext &Ctx, llvm::StringRef message);

  // How many distinct warnings were reported.
  unsigned count() const { return static_cast<unsigned>(seen_.size()); }

private:
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> options_;
  std::unique_ptr<clang::TextDiagnosticPrinter> printer_;
  std::set<std::string> seen_; // file:line:col and message
  bool warningsAsErrors_ = false;
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_REWRITEDIAGNOSTICS_H
