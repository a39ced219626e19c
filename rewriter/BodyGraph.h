// The shape of one function body that placement reasons over: each statement's parent, the
// control-flow graph with its dominator and post-dominator trees, and where loops enclose what.
#ifndef MGB_REWRITER_BODYGRAPH_H
#define MGB_REWRITER_BODYGRAPH_H

#include "clang/AST/ASTContext.h"
#include "clang/AST/ParentMap.h"
#include "clang/Analysis/Analyses/Dominators.h"
#include "clang/Analysis/CFG.h"
#include "clang/Analysis/CFGStmtMap.h"

#include <memory>

namespace mgb::rewriter {

class BodyGraph {
public:
  BodyGraph(const clang::FunctionDecl *FD, const clang::Stmt *body, clang::ASTContext &Ctx);

  const clang::Stmt *body() const { return body_; }
  bool hasCfg() const { return cfg_ != nullptr; }
  // The CFG block of S; null without a CFG or for a statement outside it.
  const clang::CFGBlock *blockOf(const clang::Stmt *S) const;
  bool dominates(const clang::CFGBlock *a, const clang::CFGBlock *b) const;
  bool postDominates(const clang::CFGBlock *a, const clang::CFGBlock *b) const;
  // Post-dominance that ignores paths ending in a noreturn call (exit() in an error-checking
  // macro): the process ends there and the runtime releases everything anyway.
  bool onEveryReturningPath(const clang::CFGBlock *through, const clang::CFGBlock *from) const;

  // S's parent statement, and the same skipping parentheses.
  const clang::Stmt *parent(const clang::Stmt *S) const;
  const clang::Stmt *parentOf(const clang::Stmt *S) const;
  bool isAncestor(const clang::Stmt *A, const clang::Stmt *S) const;
  // The index of the statement of `region` that holds n (0 when none does).
  size_t childIndex(const clang::CompoundStmt *region, const clang::Stmt *n) const;
  // A loop between n and region (region excluded).
  bool loopBetween(const clang::Stmt *n, const clang::Stmt *region) const;
  // A loop inside region around both a and b.
  bool loopAroundBoth(const clang::Stmt *a, const clang::Stmt *b, const clang::Stmt *region) const;

private:
  const clang::Stmt *body_;
  clang::ParentMap parents_;
  std::unique_ptr<clang::CFG> cfg_;
  clang::CFGDomTree dom_;
  clang::CFGPostDomTree postDom_;
  std::unique_ptr<clang::CFGStmtMap> stmtMap_;
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_BODYGRAPH_H
