#include "TaskPlanner.h"

#include "SourceText.h"

#include "clang/AST/ParentMap.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Analysis/Analyses/Dominators.h"
#include "clang/Analysis/CFG.h"
#include "clang/Analysis/CFGStmtMap.h"
#include "llvm/ADT/EquivalenceClasses.h"

#include <map>

namespace mgb::rewriter {

using namespace clang;

namespace {

const Expr *stripCasts(const Expr *E) { return E ? E->IgnoreParenCasts() : nullptr; }

} // namespace

const DeclRefExpr *pointerBase(const Expr *E) {
  E = stripCasts(E);
  while (const auto *BO = dyn_cast_or_null<BinaryOperator>(E)) {
    if (!BO->isAdditiveOp())
      return nullptr;
    const Expr *lhs = stripCasts(BO->getLHS());
    E = lhs->getType()->isPointerType() || lhs->isTypeDependent() ? lhs : stripCasts(BO->getRHS());
  }
  return dyn_cast_or_null<DeclRefExpr>(E);
}

namespace {

bool isIncompleteRecord(QualType T) {
  const auto *RT = T.getCanonicalType()->getAs<RecordType>();
  return RT && !RT->getDecl()->isCompleteDefinition();
}

} // namespace

bool mayHoldDeviceMemory(const Expr *arg, ASTContext &Ctx) {
  if (isa<CXXDefaultArgExpr>(arg))
    return false;
  const Expr *E = arg->IgnoreParenImpCasts();
  if (E->isNullPointerConstant(Ctx, Expr::NPC_ValueDependentIsNotNull))
    return false;
  // `&x`: in a template whose type may overload `&` (`const T alpha`, T a class such as __half)
  // it is an operator call.
  const Expr *addressOf = nullptr;
  if (const auto *UO = dyn_cast<UnaryOperator>(E); UO && UO->getOpcode() == UO_AddrOf)
    addressOf = UO->getSubExpr();
  if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(E);
      OC && OC->getOperator() == OO_Amp && OC->getNumArgs() == 1)
    addressOf = OC->getArg(0);
  if (addressOf) {
    // `&d[i]` is device memory; `&alpha`, `&s.field`, `&p->field` are the host's.
    const auto *AS = dyn_cast<ArraySubscriptExpr>(addressOf->IgnoreParens());
    return AS && (AS->getBase()->IgnoreParenImpCasts()->getType()->isPointerType() ||
                  AS->getBase()->isTypeDependent());
  }
  if (const auto *CE = dyn_cast<ExplicitCastExpr>(E))
    return mayHoldDeviceMemory(CE->getSubExpr(), Ctx);
  QualType T = E->getType();
  if (T->isDependentType())
    return true;
  if (!T->isPointerType())
    return false;
  QualType pointee = T->getPointeeType();
  if (pointee->isFunctionType() || isIncompleteRecord(pointee) ||
      isCudaHostStruct(pointee->getAsRecordDecl()))
    return false;
  if (pointee->isPointerType() && isIncompleteRecord(pointee->getPointeeType()))
    return false; // an array of handles (`cublasHandle_t *`)
  return true;
}

namespace {

llvm::StringRef calleeName(const CallExpr *call) {
  const Expr *callee = call->getCallee()->IgnoreParenImpCasts();
  if (const auto *U = dyn_cast<UnresolvedLookupExpr>(callee))
    return U->getName().isIdentifier() ? U->getName().getAsIdentifierInfo()->getName() : "";
  if (const FunctionDecl *FD = call->getDirectCallee())
    return FD->getIdentifier() ? FD->getName() : "";
  return "";
}

bool isLoop(const Stmt *S) {
  if (const auto *DS = dyn_cast<DoStmt>(S)) {
    // `do { ... } while (0)` of statement macros runs once.
    const Expr *cond = DS->getCond()->IgnoreParenImpCasts();
    if (const auto *IL = dyn_cast<IntegerLiteral>(cond))
      return IL->getValue() != 0;
    if (const auto *BL = dyn_cast<CXXBoolLiteralExpr>(cond))
      return BL->getValue();
    return true;
  }
  return isa<ForStmt, WhileStmt, CXXForRangeStmt>(S);
}

// Everything the planner needs from one walk over the body.
class Collector : public RecursiveASTVisitor<Collector> {
public:
  Collector(const DeclContext *fn, FunctionPlan &plan) : fn_(fn), plan_(plan) {}

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
          op.object = localVar(DRE);
      if (name == "cudaMallocPitch" && E->getNumArgs() >= 4)
        op.sizeFactors = {E->getArg(2), E->getArg(3)};
      else if (E->getNumArgs() >= 2)
        op.sizeFactors = {E->getArg(1)};
    } else if (name == "cudaMemcpyFromSymbol" || name == "cudaMemcpyToSymbol") {
      // Symbols are __device__/__constant__ globals: nothing local to trace.
    } else {
      const DeclRefExpr *dst = pointerBase(E->getArg(0));
      op.object = dst ? localVar(dst) : nullptr;
      if (!op.object && *kind == OpKind::Copy && E->getNumArgs() >= 2)
        if (const DeclRefExpr *src = pointerBase(E->getArg(1)))
          op.object = localVar(src);
    }
    plan_.ops.push_back(std::move(op));
    return true;
  }

  // A host call into code mgb cannot see (a CUDA library, thrust and cub included; a runtime
  // memory function without a twin) with an argument that may be device memory: a member of the
  // task of that memory when this function allocates it; its other device pointers are bound and
  // translated at the call (describeLibraryCalls).
  bool isHostLibraryCall(const CallExpr *E) const {
    if (foreignCallLibrary(E).empty())
      return false;
    for (const Expr *arg : E->arguments())
      if (mayHoldDeviceMemory(arg, fn_->getParentASTContext()))
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
        if (const VarDecl *v = localVar(DRE); v && isLibraryHandle(v))
          handleDestroys[v].push_back(E);
      return;
    }
    if (!callee.contains("Create") && !callee.contains("Plan"))
      return;
    if (const auto *UO = dyn_cast<UnaryOperator>(first); UO && UO->getOpcode() == UO_AddrOf)
      if (const auto *DRE = dyn_cast<DeclRefExpr>(stripCasts(UO->getSubExpr())))
        if (const VarDecl *v = localVar(DRE); v && isLibraryHandle(v))
          handleCreates[v].push_back(E);
  }

  // A variable of a library's handle type (cublasHandle_t, cusparseHandle_t, cufftHandle,
  // curandGenerator_t...): the library ties it to the device current at its creation.
  static bool isLibraryHandle(const VarDecl *v) {
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

  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (const VarDecl *VD = localVar(E))
      refs[VD].push_back(E);
    return true;
  }

  bool VisitGotoStmt(GotoStmt *) { return hasGoto = true; }
  bool VisitIndirectGotoStmt(IndirectGotoStmt *) { return hasGoto = true; }

  // A function-local variable (not static, not captured from an enclosing function).
  const VarDecl *localVar(const DeclRefExpr *E) const {
    const auto *VD = dyn_cast<VarDecl>(E->getDecl());
    if (!VD || !VD->hasLocalStorage() || VD->getDeclContext() != fn_)
      return nullptr;
    return VD;
  }

  std::map<const VarDecl *, std::vector<const DeclRefExpr *>> refs;
  std::map<const VarDecl *, std::vector<const CallExpr *>> handleCreates, handleDestroys;
  bool hasGoto = false;

private:
  const DeclContext *fn_;
  FunctionPlan &plan_;
};

// The rest of planning, with the per-function facts at hand.
class Planner {
public:
  Planner(const FunctionDecl *FD, const Stmt *body, ASTContext &Ctx, FunctionPlan &plan,
          Collector &facts)
      : FD_(FD), body_(body), Ctx_(Ctx), SM_(Ctx.getSourceManager()), LO_(Ctx.getLangOpts()),
        plan_(plan), facts_(facts), parents_(const_cast<Stmt *>(body)) {}

  void run() {
    buildCfg();
    traceAliases();
    describeLaunches();
    std::vector<std::vector<const Launch *>> groups = initialGroups();
    // Evaluate; merge static tasks whose regions overlap, demote those covering lazy allocations;
    // repeat until nothing changes (each round merges or demotes at least one group).
    std::set<const Launch *> forcedLazy;
    for (;;) {
      std::vector<Task> tasks;
      for (auto &g : groups)
        tasks.push_back(evaluate(g, forcedLazy));
      if (mergeOverlapping(tasks, groups) || demoteCovering(tasks, forcedLazy))
        continue;
      plan_.tasks = std::move(tasks);
      return;
    }
  }

private:
  // ---- facts ------------------------------------------------------------------------------------

  void buildCfg() {
    CFG::BuildOptions opts;
    opts.setAllAlwaysAdd();
    cfg_ = CFG::buildCFG(FD_, const_cast<Stmt *>(body_), &Ctx_, opts);
    if (!cfg_)
      return;
    dom_.buildDominatorTree(cfg_.get());
    postDom_.buildDominatorTree(cfg_.get());
    stmtMap_.reset(CFGStmtMap::Build(cfg_.get(), &parents_));
  }

  const CFGBlock *blockOf(const Stmt *S) {
    return stmtMap_ ? stmtMap_->getBlock(const_cast<Stmt *>(S)) : nullptr;
  }

  const Stmt *parentOf(const Stmt *S) const {
    const Stmt *P = parents_.getParent(const_cast<Stmt *>(S));
    while (P && isa<ParenExpr>(P))
      P = parents_.getParent(const_cast<Stmt *>(P));
    return P;
  }

  // Classes of pointer variables that may hold the same allocation (`q = p`, `q = p + 1`), and the
  // variables whose value comes from somewhere the planner cannot see.
  void traceAliases() {
    for (const MemOp &op : plan_.ops)
      if (op.kind == OpKind::Alloc && op.object) {
        allocated_.insert(op.object);
        aliases_.insert(op.object);
      }
    auto define = [&](const VarDecl *v, const Expr *value) {
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
        unknown_[v] =
            "`" + v->getName().str() + "` is assigned a pointer the rewriter cannot trace";
    };
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
        classifyUse(v, use, define);
    }
  }

  template <class Define>
  void classifyUse(const VarDecl *v, const DeclRefExpr *use, Define &define) {
    const Stmt *P = parentOf(use);
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

  void describeLaunches() {
    describeLibraryCalls();
    for (Launch &L : plan_.launches) {
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
        if (bare->isNullPointerConstant(Ctx_, Expr::NPC_ValueDependentIsNotNull))
          continue;
        if (T->isPointerType() || T->isDependentType()) {
          const DeclRefExpr *base = pointerBase(bare);
          const VarDecl *v = base ? facts_.localVar(base) : nullptr;
          if (v && (v->getType()->isPointerType() || T->isPointerType())) {
            L.objects.push_back(v);
            continue;
          }
          if (T->isPointerType() || (base && !v)) {
            setLazy(L, "argument `" + text(arg) +
                           "` is not a local device pointer "
                           "(global, parameter, field or expression)");
            continue;
          }
          setLazy(L, "argument `" + text(arg) + "` has a dependent type");
        } else if (const auto *RD = T->getAsRecordDecl(); RD && holdsPointer(RD)) {
          setLazy(L, "argument `" + text(arg) + "` is a struct that may hold device pointers");
        }
      }
      if (L.objects.empty() && L.lazyReason.empty())
        setLazy(L, "no local device pointer among its arguments");
      for (const VarDecl *v : L.objects) {
        auto leader = aliases_.findLeader(v);
        bool anyAlloc = false;
        for (auto it = leader; it != aliases_.member_end(); ++it) {
          anyAlloc |= allocated_.count(*it) != 0;
          if (auto u = unknown_.find(*it); u != unknown_.end())
            setLazy(L, u->second);
        }
        if (leader == aliases_.member_end() || !anyAlloc) {
          if (auto u = unknown_.find(v); u != unknown_.end())
            setLazy(L, u->second);
          else
            setLazy(L, "`" + v->getName().str() + "` is not allocated in this function");
        }
      }
    }
  }

  // A library call's objects are its pointer arguments that are device memory allocated in this
  // function; its other arguments that may be device memory (parameters, fields, views) are
  // foreign: bound and translated at the call. Without either it is no task member.
  void describeLibraryCalls() {
    for (Launch &L : plan_.launches) {
      if (!L.library)
        continue;
      for (const Expr *arg : L.library->arguments()) {
        if (!mayHoldDeviceMemory(arg, Ctx_))
          continue;
        const DeclRefExpr *base = arg->getType()->isPointerType() ? pointerBase(arg) : nullptr;
        const VarDecl *v = base ? facts_.localVar(base) : nullptr;
        bool allocated = false;
        if (v && v->getType()->isPointerType())
          for (auto it = aliases_.findLeader(v); it != aliases_.member_end(); ++it)
            allocated |= allocated_.count(*it) != 0;
        if (!allocated) {
          L.foreign.push_back(arg);
          continue;
        }
        L.objects.push_back(v);
        for (auto it = aliases_.findLeader(v); it != aliases_.member_end(); ++it)
          if (auto u = unknown_.find(*it); u != unknown_.end())
            setLazy(L, u->second);
      }
      if (L.objects.empty() && !L.foreign.empty())
        setLazy(L, "its device memory comes from outside this function");
    }
    std::erase_if(plan_.launches, [](const Launch &L) {
      return L.library && L.objects.empty() && L.foreign.empty();
    });
  }

  static bool holdsPointer(const RecordDecl *RD) {
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

  static void setLazy(Launch &L, std::string reason) {
    if (L.lazyReason.empty())
      L.lazyReason = std::move(reason);
  }

  const VarDecl *classOf(const VarDecl *v) const {
    auto it = aliases_.findValue(v);
    return it == aliases_.end() ? v : aliases_.getLeaderValue(v);
  }

  // Algorithm 1: unit tasks sharing a memory object (alias class) merge.
  std::vector<std::vector<const Launch *>> initialGroups() {
    llvm::EquivalenceClasses<const Launch *> merged;
    std::map<const VarDecl *, const Launch *> ownerOfClass;
    for (const Launch &L : plan_.launches) {
      merged.insert(&L);
      for (const VarDecl *v : L.objects) {
        auto [it, fresh] = ownerOfClass.emplace(classOf(v), &L);
        if (!fresh)
          merged.unionSets(it->second, &L);
      }
    }
    std::vector<std::vector<const Launch *>> groups;
    for (auto it = merged.begin(); it != merged.end(); ++it) {
      if (!it->isLeader())
        continue;
      std::vector<const Launch *> g(merged.member_begin(it), merged.member_end());
      std::sort(g.begin(), g.end(), [&](const Launch *a, const Launch *b) {
        return SM_.isBeforeInTranslationUnit(a->expr()->getBeginLoc(), b->expr()->getBeginLoc());
      });
      groups.push_back(std::move(g));
    }
    std::sort(groups.begin(), groups.end(), [&](const auto &a, const auto &b) {
      return SM_.isBeforeInTranslationUnit(a.front()->expr()->getBeginLoc(),
                                           b.front()->expr()->getBeginLoc());
    });
    return groups;
  }

  // ---- one task
  // -----------------------------------------------------------------------------------

  Task evaluate(const std::vector<const Launch *> &group, const std::set<const Launch *> &forced) {
    Task T;
    T.launches = group;
    for (const Launch *L : group) {
      if (!L->lazyReason.empty() && T.lazyReason.empty())
        T.lazyReason = L->lazyReason;
      if (forced.count(L) && T.lazyReason.empty())
        T.lazyReason = "its region would also hold operations of lazily bound memory";
      for (const VarDecl *v : L->objects)
        for (auto it = aliases_.findLeader(v); it != aliases_.member_end(); ++it)
          T.objects.insert(*it);
    }
    for (const MemOp &op : plan_.ops)
      if (op.object && T.objects.count(op.object))
        T.ops.push_back(&op);
    if (T.lazyReason.empty()) {
      // Library handles the task's library calls use start (and end) with the task when created
      // in this function and the region can cover them; otherwise today's region and a warning.
      HandleUses handles = handleUses(T);
      std::vector<std::pair<SourceLocation, std::string>> &outside = handles.outside;
      std::string why = placeStatically(T, handles.calls);
      if (!why.empty() && !handles.calls.empty()) {
        outside.insert(outside.end(), handles.created.begin(), handles.created.end());
        T.exits.clear();
        T.endsAtScopeExit = false;
        why = placeStatically(T, {});
      }
      T.lazyReason = why;
      if (why.empty())
        for (const auto &[at, name] : outside)
          T.warnings.push_back(siteOf(at, SM_) +
                               ": warning: library handle created outside the task: it stays on "
                               "the device current at its creation, which may not be the task's "
                               "GPU" +
                               (name.empty() ? "" : " (`" + name + "`)"));
    }
    T.isStatic = T.lazyReason.empty();
    return T;
  }

  // The library handles the task's library calls use: the calls creating them in this function
  // and destroying them after those calls, where they were created (handle names beside), and
  // the handles created elsewhere (parameters, globals, other functions: at the library call).
  struct HandleUses {
    std::vector<const Stmt *> calls;
    std::vector<std::pair<SourceLocation, std::string>> created, outside;
  };
  HandleUses handleUses(const Task &T) {
    HandleUses uses;
    std::set<const VarDecl *> seen;
    for (const Launch *L : T.launches) {
      if (!L->library)
        continue;
      for (const Expr *arg : L->library->arguments()) {
        const auto *DRE = dyn_cast<DeclRefExpr>(stripCasts(arg));
        const auto *v = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
        if (!v || !Collector::isLibraryHandle(v) || !seen.insert(v).second)
          continue;
        auto created = facts_.handleCreates.find(v);
        if (created == facts_.handleCreates.end()) {
          uses.outside.emplace_back(L->library->getBeginLoc(), v->getName().str());
          continue;
        }
        for (const CallExpr *C : created->second) {
          uses.calls.push_back(C);
          uses.created.emplace_back(C->getBeginLoc(), v->getName().str());
        }
        if (auto d = facts_.handleDestroys.find(v); d != facts_.handleDestroys.end())
          for (const CallExpr *D : d->second)
            if (SM_.isBeforeInTranslationUnit(L->library->getBeginLoc(), D->getBeginLoc()))
              uses.calls.push_back(D);
      }
    }
    return uses;
  }

  // Returns why the task cannot be bound statically ("" when it was placed).
  std::string placeStatically(Task &T, const std::vector<const Stmt *> &handleNodes) {
    if (facts_.hasGoto)
      return "the function uses goto";
    if (!cfg_)
      return "no control-flow graph for this function";
    std::vector<const Stmt *> nodes;
    const MemOp *firstAlloc = nullptr;
    for (const Launch *L : T.launches)
      nodes.push_back(L->expr());
    for (const MemOp *op : T.ops) {
      nodes.push_back(op->call);
      if (op->kind == OpKind::Alloc &&
          (!firstAlloc ||
           SM_.isBeforeInTranslationUnit(op->call->getBeginLoc(), firstAlloc->call->getBeginLoc())))
        firstAlloc = op;
    }
    if (!firstAlloc)
      return "no allocation of its memory in this function";
    // Dominance: the first allocation must dominate every operation of the task.
    const CFGBlock *allocBlock = blockOf(firstAlloc->call);
    for (const Stmt *n : nodes) {
      const CFGBlock *b = blockOf(n);
      if (!allocBlock || !b || !dom_.dominates(allocBlock, b))
        return "allocation at " + siteOf(firstAlloc->call->getBeginLoc(), SM_) +
               " does not dominate the operation at " + siteOf(n->getBeginLoc(), SM_);
    }
    // Post-dominance: memory freed on every path after the launches closes the task there;
    // otherwise the task lasts until the function returns.
    T.untilFunctionEnd = !freedAfterLaunches(T);
    for (const VarDecl *v : T.objects)
      for (const DeclRefExpr *use : facts_.refs[v])
        nodes.push_back(use);
    nodes.insert(nodes.end(), handleNodes.begin(), handleNodes.end());
    if (std::string why = findRegion(T, nodes); !why.empty())
      return why;
    for (const MemOp *op : T.ops)
      if ((op->kind == OpKind::Alloc || op->kind == OpKind::Free) &&
          loopBetween(op->call, T.region))
        return "memory allocated or freed in a loop at " + siteOf(op->call->getBeginLoc(), SM_) +
               " that the task does not enclose";
    if (std::string why = checkExits(T); !why.empty())
      return why;
    return renderProbeText(T);
  }

  bool freedAfterLaunches(const Task &T) {
    std::set<const VarDecl *> classes;
    for (const VarDecl *v : T.objects)
      classes.insert(classOf(v));
    for (const VarDecl *c : classes) {
      bool freed = false;
      for (const MemOp *op : T.ops) {
        if (op->kind != OpKind::Free || classOf(op->object) != c)
          continue;
        const CFGBlock *fb = blockOf(op->call);
        bool postDominatesAll = fb != nullptr;
        for (const Launch *L : T.launches) {
          const CFGBlock *lb = blockOf(L->expr());
          postDominatesAll = postDominatesAll && lb &&
                             (postDom_.dominates(fb, lb) || onEveryReturningPath(fb, lb));
        }
        freed |= postDominatesAll;
      }
      if (!freed)
        return false;
    }
    return true;
  }

  // Post-dominance that ignores paths ending in a noreturn call (exit() in an error-checking
  // macro): the process ends there and the runtime releases everything anyway.
  bool onEveryReturningPath(const CFGBlock *through, const CFGBlock *from) const {
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

  // The innermost compound statement holding every node, and the span of its statements they use.
  std::string findRegion(Task &T, const std::vector<const Stmt *> &nodes) {
    auto chain = [&](const Stmt *S) {
      std::vector<const Stmt *> up;
      for (const Stmt *P = S; P; P = parents_.getParent(const_cast<Stmt *>(P)))
        up.push_back(P);
      return up;
    };
    std::vector<const Stmt *> firstChain = chain(nodes.front());
    const CompoundStmt *region = nullptr;
    for (const Stmt *candidate : firstChain) {
      const auto *CS = dyn_cast<CompoundStmt>(candidate);
      if (!CS)
        continue;
      bool holdsAll = true;
      for (const Stmt *n : nodes) {
        auto c = chain(n);
        holdsAll = holdsAll && std::find(c.begin(), c.end(), CS) != c.end();
      }
      if (holdsAll) {
        region = CS;
        break;
      }
    }
    if (T.untilFunctionEnd)
      region = dyn_cast<CompoundStmt>(body_);
    if (!region)
      return "no enclosing block holds all of its operations";
    T.region = region;
    T.first = region->size();
    T.last = 0;
    for (const Stmt *n : nodes) {
      size_t i = childIndex(region, n);
      T.first = std::min(T.first, i);
      T.last = std::max(T.last, i);
    }
    if (T.untilFunctionEnd)
      T.last = region->size() - 1;
    for (const Stmt *child : region->body())
      if (isa<SwitchCase, LabelStmt>(child))
        return "the enclosing block has case or goto labels";
    return "";
  }

  size_t childIndex(const CompoundStmt *region, const Stmt *n) const {
    const Stmt *child = n;
    while (child && parents_.getParent(const_cast<Stmt *>(child)) != region)
      child = parents_.getParent(const_cast<Stmt *>(child));
    size_t i = 0;
    for (const Stmt *c : region->body()) {
      if (c == child)
        return i;
      ++i;
    }
    return 0;
  }

  bool loopBetween(const Stmt *n, const Stmt *region) const {
    for (const Stmt *P = parents_.getParent(const_cast<Stmt *>(n)); P && P != region;
         P = parents_.getParent(const_cast<Stmt *>(P)))
      if (isLoop(P))
        return true;
    return false;
  }

  // Jumps out of the region: returns get an end probe before them; break/continue to an outer
  // loop cannot be closed statically.
  std::string checkExits(Task &T) {
    std::string why;
    std::function<void(const Stmt *, int loops, int switches)> walk = [&](const Stmt *S, int loops,
                                                                          int switches) {
      if (!S || !why.empty() || isa<LambdaExpr>(S))
        return;
      if (isa<BreakStmt>(S) && loops + switches == 0)
        why = "a break at " + siteOf(S->getBeginLoc(), SM_) + " leaves the task's block";
      if (isa<ContinueStmt>(S) && loops == 0)
        why = "a continue at " + siteOf(S->getBeginLoc(), SM_) + " leaves the task's block";
      if (const auto *R = dyn_cast<ReturnStmt>(S)) {
        bool inMacroBody =
            R->getBeginLoc().isMacroID() && !SM_.isMacroArgExpansion(R->getBeginLoc());
        // A return spelled in a macro body (CHECK_CUSPARSE's `return EXIT_FAILURE;`) cannot
        // get an end probe before it: a guard object declared with the begin ends the task
        // when the block is left (in main the process ends there anyway).
        if (!inMacroBody)
          T.exits.push_back(R);
        else if (!plan_.isMain && !LO_.CPlusPlus) // the guard is a C++ destructor
          why = "a return in a macro body at " + siteOf(S->getBeginLoc(), SM_) +
                " leaves the task's block (a C file has no scope guard)";
        else if (!plan_.isMain)
          T.endsAtScopeExit = true;
      }
      bool loop = isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(S);
      bool sw = isa<SwitchStmt>(S);
      for (const Stmt *child : S->children())
        walk(child, loops + loop, switches + sw);
    };
    size_t i = 0;
    for (const Stmt *child : T.region->body()) {
      if (i >= T.first && i <= T.last)
        walk(child, 0, 0);
      ++i;
    }
    return why;
  }

  // ---- probe text -------------------------------------------------------------------------------

  std::string text(const Expr *E) const {
    if (auto t = spelledText(E, SM_, LO_))
      return *t;
    return "<macro>";
  }

  SourceLocation beginLocation(const Task &T) const {
    return statementBegin(T.region->body_begin()[T.first], SM_);
  }

  // A reference that only reads the variable (or a field of it); anything else (assignment,
  // ++, address taken, non-const reference or member call) may write it.
  bool onlyReads(const DeclRefExpr *ref) const {
    // A const variable is never written, whatever is done with it (`&nrow` handed to a
    // constructor taking `const int64_t *`, HeCBench tensorAccessor).
    if (const auto *VD = dyn_cast<VarDecl>(ref->getDecl());
        VD && VD->getType().isConstQualified() && !VD->getType()->isReferenceType())
      return true;
    const Expr *child = ref;
    const Stmt *P = parentOf(ref);
    if (const auto *ME = dyn_cast_or_null<MemberExpr>(P)) {
      child = ME;
      P = parentOf(ME);
    }
    // A kernel argument is copied into the launch: in a template (SHOC Scan's
    // `k<T, 256><<<nb, nt>>>(d, nb)`) it has no implicit cast around it, but it is still a read.
    if (const auto *K = dyn_cast_or_null<CUDAKernelCallExpr>(P))
      return K->getCallee()->IgnoreParenImpCasts() != ref;
    if (const auto *CE = dyn_cast_or_null<CallExpr>(P))
      return passedByValue(CE, child);
    return isa_and_nonnull<ImplicitCastExpr, CXXConstructExpr>(P);
  }

  // In a template, a call with a dependent argument stays unresolved and its arguments have no
  // implicit casts; an argument is still only read when every candidate callee takes it by value
  // or const reference (HeCBench scan: `cudaMemcpy(d_in, in, bytes, ...)` on a `T *` between two
  // cudaMalloc(..., bytes) made `bytes` look written).
  static bool passedByValue(const CallExpr *CE, const Expr *arg) {
    const auto *U = dyn_cast<UnresolvedLookupExpr>(CE->getCallee()->IgnoreParenImpCasts());
    if (!U)
      return false;
    unsigned index = 0;
    while (index < CE->getNumArgs() && CE->getArg(index)->IgnoreParens() != arg)
      ++index;
    if (index == CE->getNumArgs())
      return false;
    bool any = false;
    for (const NamedDecl *D : U->decls()) {
      const FunctionDecl *F = D->getUnderlyingDecl()->getAsFunction();
      if (!F)
        return false;
      if (index >= F->getNumParams()) {
        if (!F->isVariadic())
          continue; // not viable for this call
      } else if (QualType T = F->getParamDecl(index)->getType();
                 T->isReferenceType() && !T.getNonReferenceType().isConstQualified()) {
        return false;
      }
      any = true;
    }
    return any;
  }

  // Variables never written after their initialisation (safe to evaluate their initialiser early).
  bool neverWritten(const VarDecl *v) {
    if (v->getType()->isDependentType() || v->getType()->isReferenceType())
      return false;
    for (const DeclRefExpr *use : facts_.refs[v])
      if (!onlyReads(use))
        return false;
    return true;
  }

  // True when a statement of the task may write v before `use` is evaluated (earlier in the
  // task, or in a loop of the task around both): the value the begin probe reads would be stale
  // (`blocks = dim3(...)` between the allocations and the launch; a size reassigned before a
  // later cudaMalloc).
  bool writtenInTaskBefore(const VarDecl *v, const DeclRefExpr *use, const Task &T) {
    SourceLocation useAt = SM_.getExpansionLoc(use->getBeginLoc());
    for (const DeclRefExpr *ref : facts_.refs[v]) {
      if (ref == use || onlyReads(ref) || !isAncestor(T.region, ref))
        continue;
      size_t i = childIndex(T.region, ref);
      if (i < T.first || i > T.last)
        continue;
      if (SM_.isBeforeInTranslationUnit(SM_.getExpansionLoc(ref->getBeginLoc()), useAt) ||
          loopAroundBoth(ref, use, T.region))
        return true;
    }
    return false;
  }

  bool loopAroundBoth(const Stmt *a, const Stmt *b, const Stmt *region) const {
    for (const Stmt *P = parents_.getParent(const_cast<Stmt *>(b)); P && P != region;
         P = parents_.getParent(const_cast<Stmt *>(P)))
      if (isLoop(P) && isAncestor(P, a))
        return true;
    return false;
  }

  // The text of E valid at the task's begin: names must be declared before it; a variable
  // declared later but never written is replaced by its initialiser (`dim3 grid(...)` declared
  // after the allocations, as the paper's own example does).
  std::optional<std::string> textAtBegin(const Expr *E, SourceLocation begin, int depth = 0) {
    if (!E || !task_ || depth > 3 || E->HasSideEffects(Ctx_, /*IncludePossibleEffects=*/false))
      return std::nullopt;
    std::optional<CharSourceRange> range = fileRange(E->getSourceRange(), SM_, LO_);
    if (!range)
      return std::nullopt;
    std::string out = textOf(*range, SM_, LO_);
    unsigned base = SM_.getFileOffset(range->getBegin());
    std::vector<const DeclRefExpr *> names;
    std::function<void(const Stmt *)> collect = [&](const Stmt *S) {
      if (const auto *DRE = dyn_cast_or_null<DeclRefExpr>(S))
        names.push_back(DRE);
      if (S)
        for (const Stmt *c : S->children())
          collect(c);
    };
    collect(E);
    // Substitute from the last name back so that earlier offsets stay valid.
    std::sort(names.begin(), names.end(), [&](const DeclRefExpr *a, const DeclRefExpr *b) {
      return SM_.isBeforeInTranslationUnit(b->getBeginLoc(), a->getBeginLoc());
    });
    for (const DeclRefExpr *DRE : names) {
      const VarDecl *v = facts_.localVar(DRE);
      if (!v)
        continue;
      if (writtenInTaskBefore(v, DRE, *task_))
        return std::nullopt;
      if (isa<ParmVarDecl>(v) ||
          SM_.isBeforeInTranslationUnit(SM_.getExpansionLoc(v->getLocation()), begin))
        continue;
      if (!v->hasInit() || !neverWritten(v))
        return std::nullopt;
      std::optional<CharSourceRange> at = fileRange(DRE->getSourceRange(), SM_, LO_);
      std::optional<std::string> init = initialiserAtBegin(v, begin, depth + 1);
      if (!at || !init)
        return std::nullopt;
      unsigned offset = SM_.getFileOffset(at->getBegin()) - base;
      unsigned length = SM_.getFileOffset(at->getEnd()) - SM_.getFileOffset(at->getBegin());
      if (offset + length > out.size())
        return std::nullopt;
      out.replace(offset, length, "(" + *init + ")");
    }
    return out;
  }

  std::optional<std::string> initialiserAtBegin(const VarDecl *v, SourceLocation begin, int depth) {
    const Expr *init = v->getInit()->IgnoreImplicit();
    std::string type = v->getType().getUnqualifiedType().getAsString(Ctx_.getPrintingPolicy());
    if (const auto *CE = dyn_cast<CXXConstructExpr>(init);
        CE && !isa<CXXTemporaryObjectExpr>(CE) && v->getInitStyle() != VarDecl::CInit) {
      std::string args;
      for (const Expr *a : CE->arguments()) {
        if (isa<CXXDefaultArgExpr>(a))
          continue;
        std::optional<std::string> t = textAtBegin(a, begin, depth);
        if (!t)
          return std::nullopt;
        args += (args.empty() ? "" : ", ") + *t;
      }
      return type + "(" + args + ")";
    }
    std::optional<std::string> t = textAtBegin(init, begin, depth);
    if (!t)
      return std::nullopt;
    if (!LO_.CPlusPlus) // a C file's probe
      return "((" + type + ")(" + *t + "))";
    return "static_cast<" + type + ">(" + *t + ")";
  }

  std::string renderProbeText(Task &T) {
    task_ = &T;
    SourceLocation begin = beginLocation(T);
    std::string size;
    for (const MemOp *op : T.ops) {
      if (op->kind != OpKind::Alloc)
        continue;
      std::string product;
      for (const Expr *factor : op->sizeFactors) {
        std::optional<std::string> t = textAtBegin(factor, begin);
        if (!t)
          return "allocation size `" + text(factor) + "` is not known before the task begins";
        product += (product.empty() ? "(size_t)(" : " * (size_t)(") + *t + ")";
      }
      size += (size.empty() ? "" : " + ") + product;
    }
    T.sizeText = size.empty() ? "0" : size;
    // The shape is the first kernel launch's; a task of library calls only states one thread
    // (the library's own launches are not visible here).
    const Launch *first = nullptr;
    for (const Launch *L : T.launches)
      if (!first && L->call)
        first = L;
    if (!first) {
      T.gridText = T.blockText = "1";
      T.kernelText = "nullptr";
      return "";
    }
    std::optional<std::string> grid = textAtBegin(first->grid, begin);
    if (!grid)
      return "grid `" + text(first->grid) + "` is not known before the task begins";
    std::optional<std::string> block = textAtBegin(first->block, begin);
    if (!block)
      return "block `" + text(first->block) + "` is not known before the task begins";
    T.gridText = *grid;
    T.blockText = *block;
    T.kernelText = kernelText(first->call, SM_, LO_, false);
    // A kernel called through a pointer variable (`kernel = &copy;` in the task's loop, as in
    // cuda-samples transpose) may hold no kernel yet at the begin: name it only when its value
    // there is the launch's; otherwise nullptr (the kernel is optional for mgb_task_begin).
    const Expr *callee = first->call->getCallee()->IgnoreParenImpCasts();
    if (const auto *DRE = dyn_cast<DeclRefExpr>(callee); DRE && isa<VarDecl>(DRE->getDecl())) {
      std::optional<std::string> k =
          facts_.localVar(DRE) ? textAtBegin(DRE, begin) : std::optional<std::string>();
      T.kernelText = k ? *k : "nullptr";
    }
    return "";
  }

  // ---- merging
  // ------------------------------------------------------------------------------------

  static bool overlaps(const Task &a, const Task &b) {
    return a.isStatic && b.isStatic && a.region == b.region && a.first <= b.last &&
           b.first <= a.last;
  }

  bool mergeOverlapping(const std::vector<Task> &tasks,
                        std::vector<std::vector<const Launch *>> &groups) {
    for (size_t i = 0; i < tasks.size(); ++i)
      for (size_t j = i + 1; j < tasks.size(); ++j)
        if (overlaps(tasks[i], tasks[j])) {
          groups[i].insert(groups[i].end(), groups[j].begin(), groups[j].end());
          std::sort(groups[i].begin(), groups[i].end(), [&](const Launch *a, const Launch *b) {
            return SM_.isBeforeInTranslationUnit(a->expr()->getBeginLoc(),
                                                 b->expr()->getBeginLoc());
          });
          groups.erase(groups.begin() + j);
          return true;
        }
    return false;
  }

  // A static region must not swallow allocations the lazy layer is meant to record.
  bool demoteCovering(const std::vector<Task> &tasks, std::set<const Launch *> &forced) {
    for (const Task &T : tasks) {
      if (!T.isStatic)
        continue;
      for (const MemOp &op : plan_.ops) {
        if (op.kind != OpKind::Alloc || (op.object && T.objects.count(op.object)))
          continue;
        bool owned = false;
        for (const Task &other : tasks)
          owned |= other.isStatic && op.object && other.objects.count(op.object);
        if (owned)
          continue;
        size_t i = childIndex(T.region, op.call);
        bool inside = isAncestor(T.region, op.call) && i >= T.first && i <= T.last;
        if (inside) {
          for (const Launch *L : T.launches)
            forced.insert(L);
          return true;
        }
      }
    }
    return false;
  }

  bool isAncestor(const Stmt *A, const Stmt *S) const {
    for (const Stmt *P = S; P; P = parents_.getParent(const_cast<Stmt *>(P)))
      if (P == A)
        return true;
    return false;
  }

  const FunctionDecl *FD_;
  const Stmt *body_;
  ASTContext &Ctx_;
  const SourceManager &SM_;
  const LangOptions &LO_;
  FunctionPlan &plan_;
  Collector &facts_;
  ParentMap parents_;
  std::unique_ptr<CFG> cfg_;
  CFGDomTree dom_;
  CFGPostDomTree postDom_;
  std::unique_ptr<CFGStmtMap> stmtMap_;
  llvm::EquivalenceClasses<const VarDecl *> aliases_;
  std::set<const VarDecl *> allocated_;
  std::map<const VarDecl *, std::string> unknown_;
  const Task *task_ = nullptr; // the task whose probe text is being rendered
};

} // namespace

std::string kernelText(const CUDAKernelCallExpr *call, const SourceManager &SM,
                       const LangOptions &LO, bool inMacroBody) {
  const Expr *callee = call->getCallee()->IgnoreParenImpCasts();
  bool explicitArgs = false, deduced = false;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(callee)) {
    explicitArgs = DRE->hasExplicitTemplateArgs();
    if (const auto *FD = dyn_cast<FunctionDecl>(DRE->getDecl()))
      deduced = FD->getPrimaryTemplate() != nullptr;
  } else if (const auto *U = dyn_cast<UnresolvedLookupExpr>(callee)) {
    explicitArgs = U->hasExplicitTemplateArgs();
    deduced = true;
  } else {
    return "nullptr";
  }
  if (deduced && !explicitArgs)
    return "nullptr";
  std::optional<CharSourceRange> r = inMacroBody ? macroBodyRange(callee->getSourceRange(), SM, LO)
                                                 : fileRange(callee->getSourceRange(), SM, LO);
  return r ? textOf(*r, SM, LO) : "nullptr";
}

FunctionPlan planFunction(const FunctionDecl *FD, const Stmt *body, ASTContext &Ctx) {
  FunctionPlan plan;
  plan.name = FD->getNameAsString();
  plan.location = FD->getLocation();
  plan.isMain = FD->isMain();
  // Device code (kernels, __device__ and __host__ __device__ helpers) is compiled for the GPU
  // too, where no probe may go: it is never planned.
  if (FD->hasAttr<CUDAGlobalAttr>() || FD->hasAttr<CUDADeviceAttr>())
    return plan;
  Collector facts(FD, plan);
  facts.TraverseStmt(const_cast<Stmt *>(body));
  if (plan.alreadyRewritten || plan.launches.empty())
    return plan;
  Planner(FD, body, Ctx, plan, facts).run();
  return plan;
}

} // namespace mgb::rewriter
