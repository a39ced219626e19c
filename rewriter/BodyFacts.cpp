#include "BodyFacts.h"

#include "ExprQueries.h"

#include "clang/AST/RecursiveASTVisitor.h"

namespace mgb::rewriter {

using namespace clang;

const VarDecl *BodyFacts::localVar(const DeclRefExpr *E) const {
  const auto *VD = dyn_cast<VarDecl>(E->getDecl());
  if (!VD || !VD->hasLocalStorage() || VD->getDeclContext() != function)
    return nullptr;
  return VD;
}

const std::vector<const DeclRefExpr *> &BodyFacts::refsOf(const VarDecl *v) const {
  static const std::vector<const DeclRefExpr *> none;
  auto it = refs.find(v);
  return it == refs.end() ? none : it->second;
}

bool isLibraryHandle(const VarDecl *v) {
  const auto *TT = v->getType()->getAs<TypedefType>();
  if (!TT)
    return false;
  const TypedefNameDecl *TD = TT->getDecl();
  llvm::StringRef n = TD->getName();
  if (!n.ends_with("Handle_t") && !n.ends_with("Handle") && !n.ends_with("Generator_t"))
    return false;
  llvm::StringRef library = cudaLibraryOf(TD);
  return !library.empty() && library != "thrust" && library != "cub";
}

namespace {

class BodyWalker : public RecursiveASTVisitor<BodyWalker> {
public:
  BodyWalker(BodyFacts &facts, FunctionPlan &plan) : facts_(facts), plan_(plan) {}

  bool TraverseLambdaExpr(LambdaExpr *) { return true; } // planned as its own function
  bool shouldVisitTemplateInstantiations() const { return false; }

  bool VisitCUDAKernelCallExpr(CUDAKernelCallExpr *E) {
    Launch L;
    L.call = E;
    if (const CallExpr *cfg = E->getConfig()) {
      if (cfg->getNumArgs() >= 2) {
        L.grid = cfg->getArg(0);
        L.block = cfg->getArg(1);
      }
      if (cfg->getNumArgs() >= 4 && !isa<CXXDefaultArgExpr>(cfg->getArg(3)))
        L.stream = cfg->getArg(3);
    }
    plan_.launches.push_back(std::move(L));
    return true;
  }

  bool VisitCallExpr(CallExpr *E) {
    if (isa<CUDAKernelCallExpr>(E))
      return true;
    if (isMgbProbeName(calleeName(E)))
      plan_.alreadyRewritten = true;
    llvm::StringRef name = cudaNameOfCallee(E);
    if (name.empty())
      noteHandleCall(E);
    if (name.empty() && isHostLibraryCall(E)) {
      Launch L;
      L.library = E;
      plan_.launches.push_back(std::move(L));
      return true;
    }
    std::optional<OpKind> kind = name.empty() ? std::nullopt : cudaOpKind(name);
    if (!kind || *kind == OpKind::Other || E->getNumArgs() == 0)
      return true;
    MemOp op;
    op.call = E;
    op.kind = *kind;
    const Expr *first = stripCasts(E->getArg(0));
    if (*kind == OpKind::Alloc) {
      if (const auto *UO = dyn_cast<UnaryOperator>(first); UO && UO->getOpcode() == UO_AddrOf)
        if (const auto *DRE = dyn_cast<DeclRefExpr>(stripCasts(UO->getSubExpr())))
          op.object = facts_.localVar(DRE);
      if (name == "cudaMallocPitch" && E->getNumArgs() >= 4)
        op.sizeFactors = {E->getArg(2), E->getArg(3)};
      else if (E->getNumArgs() >= 2)
        op.sizeFactors = {E->getArg(1)};
    } else if (name == "cudaMemcpyFromSymbol" || name == "cudaMemcpyToSymbol") {
      // Symbols are __device__/__constant__ globals: nothing local to trace.
    } else {
      const DeclRefExpr *dst = pointerBase(E->getArg(0));
      op.object = dst ? facts_.localVar(dst) : nullptr;
      if (!op.object && *kind == OpKind::Copy && E->getNumArgs() >= 2)
        if (const DeclRefExpr *src = pointerBase(E->getArg(1)))
          op.object = facts_.localVar(src);
    }
    plan_.ops.push_back(std::move(op));
    return true;
  }

  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (const VarDecl *VD = facts_.localVar(E))
      facts_.refs[VD].push_back(E);
    return true;
  }

  bool VisitGotoStmt(GotoStmt *) { return facts_.hasGoto = true; }
  bool VisitIndirectGotoStmt(IndirectGotoStmt *) { return facts_.hasGoto = true; }

private:
  // A host call into code mgb cannot see (a CUDA library, thrust and cub included; a runtime
  // memory function without a twin) with an argument that may be device memory: a member of the
  // task of that memory when this function allocates it; its other device pointers are bound and
  // translated at the call (describeLibraryCalls).
  bool isHostLibraryCall(const CallExpr *E) const {
    if (foreignCallLibrary(E).empty())
      return false;
    for (const Expr *arg : E->arguments())
      if (mayHoldDeviceMemory(arg, facts_.function->getParentASTContext()))
        return true;
    return false;
  }

  // A library handle's creation (`cublasCreate(&h)`, `cufftPlan1d(&plan, ...)`,
  // `curandCreateGenerator(&gen, ...)`) or destruction (`cublasDestroy(h)`) in this function.
  void noteHandleCall(const CallExpr *E) {
    const FunctionDecl *FD = E->getDirectCallee();
    if (!FD || !FD->getIdentifier() || E->getNumArgs() == 0)
      return;
    if (hostLibraryOf(FD).empty())
      return;
    llvm::StringRef callee = FD->getName();
    const Expr *first = stripCasts(E->getArg(0));
    if (callee.contains("Destroy")) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(first))
        if (const VarDecl *v = facts_.localVar(DRE); v && isLibraryHandle(v))
          facts_.handleDestroys[v].push_back(E);
      return;
    }
    if (!callee.contains("Create") && !callee.contains("Plan"))
      return;
    if (const auto *UO = dyn_cast<UnaryOperator>(first); UO && UO->getOpcode() == UO_AddrOf)
      if (const auto *DRE = dyn_cast<DeclRefExpr>(stripCasts(UO->getSubExpr())))
        if (const VarDecl *v = facts_.localVar(DRE); v && isLibraryHandle(v))
          facts_.handleCreates[v].push_back(E);
  }

  BodyFacts &facts_;
  FunctionPlan &plan_;
};

} // namespace

BodyFacts collectBodyFacts(const FunctionDecl *function, const Stmt *body, FunctionPlan &plan) {
  BodyFacts facts;
  facts.function = function;
  BodyWalker(facts, plan).TraverseStmt(const_cast<Stmt *>(body));
  return facts;
}

} // namespace mgb::rewriter
