// Small questions about one expression or statement that planning and writing both ask: which
// variable a pointer expression is based on, whether an argument may be device memory.
#ifndef MGB_REWRITER_EXPRQUERIES_H
#define MGB_REWRITER_EXPRQUERIES_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/StringRef.h"

namespace mgb::rewriter {

// E without parentheses and casts; null for null.
const clang::Expr *stripCasts(const clang::Expr *E);

// The pointer variable behind `p`, `p + i`, `(T *)p`; null for anything else.
const clang::DeclRefExpr *pointerBase(const clang::Expr *E);

// Whether a call argument may hold device memory: a pointer (or a dependent type) that is not
// a null pointer, a host variable's address (`&alpha`), a host array, an opaque handle
// (`cublasHandle_t`), a function or one of CUDA's own host structs (`cudaDeviceProp *`).
bool mayHoldDeviceMemory(const clang::Expr *arg, clang::ASTContext &Ctx);

// The called function's name as spelled (resolved or not); "" when it has none.
llvm::StringRef calleeName(const clang::CallExpr *call);

// A statement that may run its body more than once (`do { } while (0)` does not).
bool isLoop(const clang::Stmt *S);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_EXPRQUERIES_H
