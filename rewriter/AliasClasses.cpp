#include "AliasClasses.h"

#include "ExprQueries.h"

#include "clang/AST/ExprCXX.h"

namespace mgb::rewriter {

using namespace clang;

AliasClasses::AliasClasses(const FunctionPlan &plan, const BodyFacts &facts, const BodyGraph &graph,
                           ASTContext &Ctx)
    : plan_(plan), facts_(facts), graph_(graph), Ctx_(Ctx) {
  for (const MemOp &op : plan_.ops)
    if (op.kind == OpKind::Alloc && op.object) {
      allocated_.insert(op.object);
      aliases_.insert(op.object);
    }
  for (const auto &[v, uses] : facts_.refs) {
    if (!v->getType()->isPointerType() && !v->getType()->isDependentType())
      continue;
    if (const auto *P = dyn_cast<ParmVarDecl>(v)) {
      unknown_[v] = "pointer parameter `" + P->getName().str() + "` is allocated by the caller";
      continue;
    }
    if (v->hasInit() && !isa<ParmVarDecl>(v))
      define(v, v->getInit());
    for (const DeclRefExpr *use : uses)
      classifyUse(v, use);
  }
}

void AliasClasses::define(const VarDecl *v, const Expr *value) {
  aliases_.insert(v);
  if (!value || value->isNullPointerConstant(Ctx_, Expr::NPC_ValueDependentIsNotNull))
    return;
  const DeclRefExpr *src = pointerBase(value);
  const VarDecl *w = src ? facts_.localVar(src) : nullptr;
  if (w) {
    aliases_.unionSets(v, w);
    return;
  }
  if (!unknown_.count(v))
    unknown_[v] = "`" + v->getName().str() + "` is assigned a pointer the rewriter cannot trace";
}

void AliasClasses::classifyUse(const VarDecl *v, const DeclRefExpr *use) {
  const Stmt *P = graph_.parentOf(use);
  if (const auto *BO = dyn_cast_or_null<BinaryOperator>(P)) {
    if (BO->getOpcode() == BO_Assign && stripCasts(BO->getLHS()) == use)
      define(v, BO->getRHS());
    return;
  }
  if (const auto *UO = dyn_cast_or_null<UnaryOperator>(P)) {
    if (UO->getOpcode() != UO_AddrOf)
      return;
    for (const MemOp &op : plan_.ops)
      if (op.kind == OpKind::Alloc && op.object == v &&
          op.call->getArg(0)->getSourceRange().fullyContains(UO->getSourceRange()))
        return;
    unknown_[v] =
        "the address of `" + v->getName().str() + "` escapes (`&" + v->getName().str() + "`)";
    return;
  }
  if (const auto *CE = dyn_cast_or_null<CallExpr>(P)) {
    if (!CE->isTypeDependent() && !isa<CUDAKernelCallExpr>(CE) && CE->getCallee() != use)
      unknown_[v] =
          "`" + v->getName().str() + "` is passed by reference to `" + calleeName(CE).str() + "`";
    return;
  }
  if (isa_and_nonnull<DeclStmt>(P)) {
    for (const Decl *D : cast<DeclStmt>(P)->decls())
      if (const auto *R = dyn_cast<VarDecl>(D); R && R->getType()->isReferenceType())
        unknown_[v] = "a reference to `" + v->getName().str() + "` is taken";
  }
}

std::vector<const VarDecl *> AliasClasses::members(const VarDecl *v) const {
  return {aliases_.findLeader(v), aliases_.member_end()};
}

const VarDecl *AliasClasses::leader(const VarDecl *v) const {
  auto it = aliases_.findValue(v);
  return it == aliases_.end() ? v : aliases_.getLeaderValue(v);
}

const std::string *AliasClasses::unknownReason(const VarDecl *v) const {
  auto it = unknown_.find(v);
  return it == unknown_.end() ? nullptr : &it->second;
}

} // namespace mgb::rewriter
