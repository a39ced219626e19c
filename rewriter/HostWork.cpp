#include "HostWork.h"

#include "CudaApi.h"
#include "ExprQueries.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"

namespace mgb::rewriter {

using namespace clang;

bool isCudaCall(const CallExpr *C) {
  if (!cudaNameOfCallee(C).empty() || !foreignCallLibrary(C).empty())
    return true;
  if (const FunctionDecl *FD = C->getDirectCallee()) {
    const FunctionDecl *pattern = templatePattern(FD);
    if (isCudaRuntimeDecl(pattern) || !cudaLibraryOf(pattern).empty())
      return true;
  }
  return calleeName(C).starts_with("cu");
}

bool jumpsOrLaunches(const Stmt *S) {
  return isa<ReturnStmt, BreakStmt, ContinueStmt, GotoStmt, IndirectGotoStmt, LabelStmt,
             CXXThrowExpr, CUDAKernelCallExpr>(S);
}

bool isHostWork(const Stmt *S, const std::set<const VarDecl *> &objects) {
  bool ok = true;
  visitStmts(S, [&](const Stmt *E) {
    if (jumpsOrLaunches(E))
      ok = false;
    if (const auto *DRE = dyn_cast<DeclRefExpr>(E))
      if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl()); V && objects.count(V))
        ok = false;
    if (const auto *C = dyn_cast<CallExpr>(E); C && isCudaCall(C))
      ok = false;
  });
  return ok;
}

void visitStmts(const Stmt *S, const std::function<void(const Stmt *)> &fn) {
  if (!S)
    return;
  fn(S);
  for (const Stmt *c : S->children())
    visitStmts(c, fn);
}

} // namespace mgb::rewriter
