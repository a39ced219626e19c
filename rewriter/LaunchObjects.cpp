#include "LaunchObjects.h"

#include "ExprQueries.h"
#include "SourceText.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"

namespace mgb::rewriter {

using namespace clang;

namespace {

// Keeps the first reason found.
void setLazy(Launch &L, std::string reason) {
  if (L.lazyReason.empty())
    L.lazyReason = std::move(reason);
}

bool holdsPointer(const RecordDecl *RD) {
  // Fields of base classes count too: a PyTorch-style accessor keeps its data pointer in a
  // base (HeCBench tensorAccessor's GenericPackedTensorAccessorBase::data_).
  if (const auto *CRD = dyn_cast<CXXRecordDecl>(RD); CRD && CRD->hasDefinition())
    for (const CXXBaseSpecifier &B : CRD->bases())
      if (const RecordDecl *base = B.getType()->getAsRecordDecl(); base && holdsPointer(base))
        return true;
  for (const FieldDecl *F : RD->fields()) {
    QualType T = F->getType();
    if (T->isPointerType() || T->isDependentType())
      return true;
    if (const RecordDecl *inner = T->getAsRecordDecl(); inner && holdsPointer(inner))
      return true;
  }
  return false;
}

// A library call's objects are its pointer arguments that are device memory allocated in this
// function; its other arguments that may be device memory (parameters, fields, views) are
// foreign: bound and translated at the call. Without either it is no task member.
void describeLibraryCalls(FunctionPlan &plan, const BodyFacts &facts, const AliasClasses &aliases,
                          ASTContext &Ctx) {
  for (Launch &L : plan.launches) {
    if (!L.library)
      continue;
    for (const Expr *arg : L.library->arguments()) {
      if (!mayHoldDeviceMemory(arg, Ctx))
        continue;
      const DeclRefExpr *base = arg->getType()->isPointerType() ? pointerBase(arg) : nullptr;
      const VarDecl *v = base ? facts.localVar(base) : nullptr;
      bool allocated = false;
      if (v && v->getType()->isPointerType())
        for (const VarDecl *m : aliases.members(v))
          allocated |= aliases.isAllocated(m);
      if (!allocated) {
        L.foreign.push_back(arg);
        continue;
      }
      L.objects.push_back(v);
      for (const VarDecl *m : aliases.members(v))
        if (const std::string *why = aliases.unknownReason(m))
          setLazy(L, *why);
    }
    if (L.objects.empty() && !L.foreign.empty())
      setLazy(L, "its device memory comes from outside this function");
  }
  std::erase_if(plan.launches, [](const Launch &L) {
    return L.library && L.objects.empty() && L.foreign.empty();
  });
}

} // namespace

void describeLaunches(FunctionPlan &plan, const BodyFacts &facts, const AliasClasses &aliases,
                      ASTContext &Ctx) {
  describeLibraryCalls(plan, facts, aliases, Ctx);
  const SourceManager &SM = Ctx.getSourceManager();
  const LangOptions &LO = Ctx.getLangOpts();
  for (Launch &L : plan.launches) {
    if (L.library)
      continue;
    if (!L.grid || !L.block) {
      L.lazyReason = "launch configuration not understood";
      continue;
    }
    for (const Expr *arg : L.call->arguments()) {
      if (isa<CXXDefaultArgExpr>(arg))
        continue;
      const Expr *bare = stripCasts(arg);
      QualType T = bare->getType();
      if (bare->isNullPointerConstant(Ctx, Expr::NPC_ValueDependentIsNotNull))
        continue;
      if (T->isPointerType() || T->isDependentType()) {
        const DeclRefExpr *base = pointerBase(bare);
        const VarDecl *v = base ? facts.localVar(base) : nullptr;
        if (v && (v->getType()->isPointerType() || T->isPointerType())) {
          L.objects.push_back(v);
          continue;
        }
        if (T->isPointerType() || (base && !v)) {
          setLazy(L, "argument `" + messageText(arg, SM, LO) +
                         "` is not a local device pointer "
                         "(global, parameter, field or expression)");
          continue;
        }
        setLazy(L, "argument `" + messageText(arg, SM, LO) + "` has a dependent type");
      } else if (const auto *RD = T->getAsRecordDecl(); RD && holdsPointer(RD)) {
        setLazy(L, "argument `" + messageText(arg, SM, LO) +
                       "` is a struct that may hold device pointers");
      }
    }
    if (L.objects.empty() && L.lazyReason.empty())
      setLazy(L, "no local device pointer among its arguments");
    for (const VarDecl *v : L.objects) {
      bool anyAlloc = false;
      for (const VarDecl *m : aliases.members(v)) {
        anyAlloc |= aliases.isAllocated(m);
        if (const std::string *why = aliases.unknownReason(m))
          setLazy(L, *why);
      }
      if (!anyAlloc) {
        if (const std::string *why = aliases.unknownReason(v))
          setLazy(L, *why);
        else
          setLazy(L, "`" + v->getName().str() + "` is not allocated in this function");
      }
    }
  }
}

} // namespace mgb::rewriter
