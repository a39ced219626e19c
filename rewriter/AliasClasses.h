// Which local pointer variables may hold the same allocation (`q = p`, `q = p + 1`): Algorithm
// 1's memory objects. A variable whose value comes from somewhere the planner cannot see (a
// parameter, an untraced assignment, an escaping address) carries the reason.
#ifndef MGB_REWRITER_ALIASCLASSES_H
#define MGB_REWRITER_ALIASCLASSES_H

#include "BodyFacts.h"
#include "BodyGraph.h"
#include "PlanModel.h"

#include "llvm/ADT/EquivalenceClasses.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace mgb::rewriter {

class AliasClasses {
public:
  // Traces the aliases of every pointer variable the body names.
  AliasClasses(const FunctionPlan &plan, const BodyFacts &facts, const BodyGraph &graph,
               clang::ASTContext &Ctx);

  // The variables of v's class, leader first; empty when v is in none.
  std::vector<const clang::VarDecl *> members(const clang::VarDecl *v) const;
  // The class's representative (v itself when it is in none).
  const clang::VarDecl *leader(const clang::VarDecl *v) const;
  // Allocated in this function by a runtime allocation call.
  bool isAllocated(const clang::VarDecl *v) const { return allocated_.count(v) != 0; }
  // Why v's value cannot be traced; null when it can.
  const std::string *unknownReason(const clang::VarDecl *v) const;

private:
  void define(const clang::VarDecl *v, const clang::Expr *value);
  void classifyUse(const clang::VarDecl *v, const clang::DeclRefExpr *use);

  const FunctionPlan &plan_;
  const BodyFacts &facts_;
  const BodyGraph &graph_;
  clang::ASTContext &Ctx_;
  llvm::EquivalenceClasses<const clang::VarDecl *> aliases_;
  std::set<const clang::VarDecl *> allocated_;
  std::map<const clang::VarDecl *, std::string> unknown_;
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_ALIASCLASSES_H
