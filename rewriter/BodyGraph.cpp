#include "BodyGraph.h"

#include "ExprQueries.h"

#include <set>
#include <vector>

namespace mgb::rewriter {

using namespace clang;

BodyGraph::BodyGraph(const FunctionDecl *FD, const Stmt *body, ASTContext &Ctx)
    : body_(body), parents_(const_cast<Stmt *>(body)) {
  CFG::BuildOptions opts;
  opts.setAllAlwaysAdd();
  cfg_ = CFG::buildCFG(FD, const_cast<Stmt *>(body), &Ctx, opts);
  if (!cfg_)
    return;
  dom_.buildDominatorTree(cfg_.get());
  postDom_.buildDominatorTree(cfg_.get());
  stmtMap_.reset(CFGStmtMap::Build(cfg_.get(), &parents_));
}

const CFGBlock *BodyGraph::blockOf(const Stmt *S) const {
  return stmtMap_ ? stmtMap_->getBlock(const_cast<Stmt *>(S)) : nullptr;
}

bool BodyGraph::dominates(const CFGBlock *a, const CFGBlock *b) const {
  return dom_.dominates(a, b);
}

bool BodyGraph::postDominates(const CFGBlock *a, const CFGBlock *b) const {
  return postDom_.dominates(a, b);
}

bool BodyGraph::onEveryReturningPath(const CFGBlock *through, const CFGBlock *from) const {
  std::set<const CFGBlock *> seen{through};
  std::vector<const CFGBlock *> work{from};
  while (!work.empty()) {
    const CFGBlock *b = work.back();
    work.pop_back();
    if (!seen.insert(b).second)
      continue;
    if (b->hasNoReturnElement())
      continue;
    if (b == &cfg_->getExit())
      return false;
    for (const CFGBlock *succ : b->succs())
      if (succ)
        work.push_back(succ);
  }
  return true;
}

const Stmt *BodyGraph::parent(const Stmt *S) const {
  return parents_.getParent(const_cast<Stmt *>(S));
}

const Stmt *BodyGraph::parentOf(const Stmt *S) const {
  const Stmt *P = parent(S);
  while (P && isa<ParenExpr>(P))
    P = parent(P);
  return P;
}

bool BodyGraph::isAncestor(const Stmt *A, const Stmt *S) const {
  for (const Stmt *P = S; P; P = parent(P))
    if (P == A)
      return true;
  return false;
}

size_t BodyGraph::childIndex(const CompoundStmt *region, const Stmt *n) const {
  const Stmt *child = n;
  while (child && parent(child) != region)
    child = parent(child);
  size_t i = 0;
  for (const Stmt *c : region->body()) {
    if (c == child)
      return i;
    ++i;
  }
  return 0;
}

bool BodyGraph::loopBetween(const Stmt *n, const Stmt *region) const {
  for (const Stmt *P = parent(n); P && P != region; P = parent(P))
    if (isLoop(P))
      return true;
  return false;
}

bool BodyGraph::loopAroundBoth(const Stmt *a, const Stmt *b, const Stmt *region) const {
  for (const Stmt *P = parent(b); P && P != region; P = parent(P))
    if (isLoop(P) && isAncestor(P, a))
      return true;
  return false;
}

} // namespace mgb::rewriter
