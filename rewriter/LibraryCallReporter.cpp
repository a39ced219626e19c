#include "LibraryCallReporter.h"

#include "CudaApi.h"
#include "SourceText.h"

#include "clang/AST/Expr.h"

namespace mgb::rewriter {

using namespace clang;
using namespace clang::ast_matchers;

void LibraryCallReporter::registerMatchers(MatchFinder &finder) {
  // Host code only: device-side library functions (curand_init, cub::BlockReduce::Sum) run
  // inside the program's own kernels, which mgb already places (HeCBench dropout, accuracy).
  auto deviceOnly = functionDecl(anyOf(hasAttr(attr::CUDAGlobal),
                                       allOf(hasAttr(attr::CUDADevice),
                                             unless(hasAttr(attr::CUDAHost)))));
  finder.addMatcher(callExpr(callee(functionDecl(unless(deviceOnly))),
                             unless(hasAncestor(deviceOnly)))
                        .bind("call"),
                    this);
}

void LibraryCallReporter::run(const MatchFinder::MatchResult &result) {
  const auto *call = result.Nodes.getNodeAs<CallExpr>("call");
  const FunctionDecl *FD = call->getDirectCallee();
  const SourceManager &SM = *result.SourceManager;
  SourceLocation at = SM.getExpansionLoc(call->getBeginLoc());
  // Only the user's code: the libraries call themselves inside their own (system) headers.
  if (!FD || !FD->getIdentifier() || !at.isValid() || SM.isInSystemHeader(at) ||
      !edits_.isEditable(at, SM))
    return;
  llvm::StringRef library = hostLibraryOf(FD);
  if (library.empty())
    return;
  std::string text = siteOf(at, SM) + ": warning: " + FD->getName().str() +
                     " works on the GPU through " + library.str() +
                     ": its kernels and memory are not managed by mgb (they use the device "
                     "current at the call)";
  if (reported_.insert(text).second)
    warnings_ << text << "\n";
}

} // namespace mgb::rewriter
