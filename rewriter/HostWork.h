// Host work: statements that neither touch a task's memory nor call into CUDA. A task's probes
// may move across them without changing what the program computes (FreeHoisting moves a task's
// end up over them, AllocationSinking its begin down).
#ifndef MGB_REWRITER_HOSTWORK_H
#define MGB_REWRITER_HOSTWORK_H

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"

#include <functional>
#include <set>

namespace mgb::rewriter {

// Any call into CUDA: the runtime (cudaDestroyTextureObject too), the driver (cu*), a CUDA
// library (cuBLAS, thrust...). By name where the callee is not resolved: a user's `cutoff()`
// only makes this coarser.
bool isCudaCall(const clang::CallExpr *C);

// A way out of the enclosing block (return, break, continue, goto, label, throw) or a kernel
// launch: a probe cannot move across it.
bool jumpsOrLaunches(const clang::Stmt *S);

// No use of `objects`, no CUDA call or kernel launch, no way out of the enclosing block (return,
// break, continue, goto, label, throw).
bool isHostWork(const clang::Stmt *S, const std::set<const clang::VarDecl *> &objects);

// Calls fn on S and every statement below it, parents first.
void visitStmts(const clang::Stmt *S, const std::function<void(const clang::Stmt *)> &fn);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_HOSTWORK_H
