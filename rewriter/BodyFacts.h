// One walk over a function body: its launches, library calls and memory operations go into the
// plan; what later steps ask about its variables (every reference, library handles made and
// destroyed, whether it uses goto) stays here.
#ifndef MGB_REWRITER_BODYFACTS_H
#define MGB_REWRITER_BODYFACTS_H

#include "PlanModel.h"

#include "clang/AST/Decl.h"

#include <map>
#include <vector>

namespace mgb::rewriter {

struct BodyFacts {
  const clang::DeclContext *function = nullptr;
  std::map<const clang::VarDecl *, std::vector<const clang::DeclRefExpr *>> refs;
  // Library handles created (`cublasCreate(&h)`) and destroyed (`cublasDestroy(h)`) here.
  std::map<const clang::VarDecl *, std::vector<const clang::CallExpr *>> handleCreates,
      handleDestroys;
  bool hasGoto = false;

  // Every reference to v in the body (none for a variable it never names).
  const std::vector<const clang::DeclRefExpr *> &refsOf(const clang::VarDecl *v) const;

  // The function-local variable E names (not static, not captured from an enclosing function).
  const clang::VarDecl *localVar(const clang::DeclRefExpr *E) const;
};

// Walks `body` of `function` (lambdas inside are planned on their own): fills plan.launches,
// plan.ops and plan.alreadyRewritten.
BodyFacts collectBodyFacts(const clang::FunctionDecl *function, const clang::Stmt *body,
                           FunctionPlan &plan);

// A variable of a library's handle type (cublasHandle_t, cusparseHandle_t, cufftHandle,
// curandGenerator_t...): the library ties it to the device current at its creation.
bool isLibraryHandle(const clang::VarDecl *v);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_BODYFACTS_H
