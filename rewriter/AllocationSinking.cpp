#include "AllocationSinking.h"

#include "CudaApi.h"
#include "ExprQueries.h"
#include "HostWork.h"
#include "ProbeText.h"

#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"

#include <algorithm>

namespace mgb::rewriter {

using namespace clang;

namespace {

// What an error-checking macro around an allocation may call beside it: the report of a
// failure, which touches no memory.
bool isErrorReport(const CallExpr *C) {
  llvm::StringRef name = calleeName(C);
  return name == "cudaGetErrorString" || name == "cudaGetErrorName" || name == "cudaGetLastError" ||
         name == "cudaPeekAtLastError";
}

class Sinker {
public:
  Sinker(Task &T, const BodyFacts &facts, const BodyGraph &graph, ASTContext &Ctx)
      : T_(T), facts_(facts), graph_(graph), Ctx_(Ctx), SM_(Ctx.getSourceManager()) {}

  void run() {
    if (!T_.isStatic || T_.region == nullptr || T_.launches.empty())
      return;
    for (const Launch *L : T_.launches)
      if (!L->call) // a library call's handle lives on the device current at the begin
        return;
    const size_t from = T_.first;
    size_t at = from;
    bool allocated = false, passedWork = false;
    std::vector<const MemOp *> passed;
    for (; at <= T_.last; ++at) {
      const Stmt *child = T_.region->body_begin()[at];
      if (allocationsOnly(child, passed)) {
        allocated = true;
        continue;
      }
      if (!isHostWork(child, T_.objects))
        break;
      passedWork = passedWork || (allocated && doesWork(child));
    }
    // (No return lies among the statements passed over: both tests above refuse one.)
    if (!passedWork || at > T_.last)
      return;
    if (!readsHoldAt(passed, from, at))
      return;
    Task moved = T_;
    moved.first = at;
    if (!renderProbeText(moved, facts_, graph_, Ctx_).empty())
      return; // the shape is not known there: the begin stays before the allocations
    for (const MemOp *op : passed)
      if (std::find(moved.boundAtBegin.begin(), moved.boundAtBegin.end(), op->object) ==
          moved.boundAtBegin.end())
        moved.boundAtBegin.push_back(op->object);
    T_ = std::move(moved);
  }

private:
  // A statement of the region whose only part in the task is cudaMalloc of local pointers (maybe
  // inside an error-checking macro); their ops are added to `passed`.
  bool allocationsOnly(const Stmt *child, std::vector<const MemOp *> &passed) const {
    std::vector<const MemOp *> allocs;
    for (const MemOp *op : T_.ops) {
      if (!graph_.isAncestor(child, op->call))
        continue;
      if (op->kind != OpKind::Alloc || cudaNameOfCallee(op->call) != "cudaMalloc" || !op->object ||
          !op->object->getType()->isPointerType())
        return false;
      allocs.push_back(op);
    }
    if (allocs.empty())
      return false;
    auto insideAlloc = [&](const Stmt *S) {
      return std::any_of(allocs.begin(), allocs.end(),
                         [&](const MemOp *op) { return graph_.isAncestor(op->call, S); });
    };
    bool ok = true;
    visitStmts(child, [&](const Stmt *S) {
      if (jumpsOrLaunches(S))
        ok = false;
      if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
        if (const auto *V = dyn_cast<VarDecl>(DRE->getDecl());
            V && T_.objects.count(V) && !insideAlloc(DRE))
          ok = false;
      if (const auto *C = dyn_cast<CallExpr>(S);
          C && isCudaCall(C) && !isErrorReport(C) &&
          std::none_of(allocs.begin(), allocs.end(),
                       [&](const MemOp *op) { return op->call == C; }))
        ok = false;
    });
    if (ok)
      passed.insert(passed.end(), allocs.begin(), allocs.end());
    return ok;
  }

  // Host work worth moving the begin past: a loop or a call (making an input, reading a file).
  static bool doesWork(const Stmt *child) {
    bool work = false;
    visitStmts(child, [&](const Stmt *S) { work = work || isLoop(S) || isa<CallExpr>(S); });
    return work;
  }

  // The begin at statement `at` reads the passed allocations' sizes and pointers: each local
  // variable they name must be in scope there (declared outside the statements passed over, or
  // by one of them at the block's level) and not written by them outside the allocations.
  bool readsHoldAt(const std::vector<const MemOp *> &passed, size_t from, size_t at) const {
    std::vector<const DeclRefExpr *> names;
    for (const MemOp *op : passed)
      visitStmts(op->call, [&](const Stmt *S) {
        if (const auto *DRE = dyn_cast<DeclRefExpr>(S))
          names.push_back(DRE);
      });
    for (const DeclRefExpr *name : names) {
      const VarDecl *v = facts_.localVar(name);
      if (!v)
        continue;
      if (!declaredInScopeAt(v, from, at))
        return false;
      for (const DeclRefExpr *ref : facts_.refsOf(v)) {
        if (!graph_.isAncestor(T_.region, ref))
          continue;
        size_t i = graph_.childIndex(T_.region, ref);
        bool inAlloc = std::any_of(passed.begin(), passed.end(), [&](const MemOp *op) {
          return graph_.isAncestor(op->call, ref);
        });
        if (i >= from && i < at && !inAlloc && !onlyReads(ref, graph_))
          return false;
      }
    }
    return true;
  }

  // Not declared inside a nested scope of one of the statements [from, at).
  bool declaredInScopeAt(const VarDecl *v, size_t from, size_t at) const {
    SourceLocation where = SM_.getExpansionLoc(v->getLocation());
    for (size_t i = from; i < at; ++i) {
      const Stmt *child = T_.region->body_begin()[i];
      if (isa<DeclStmt>(child))
        continue;
      SourceLocation b = SM_.getExpansionLoc(child->getBeginLoc()),
                     e = SM_.getExpansionLoc(child->getEndLoc());
      if (!SM_.isBeforeInTranslationUnit(where, b) && !SM_.isBeforeInTranslationUnit(e, where))
        return false;
    }
    return true;
  }

  Task &T_;
  const BodyFacts &facts_;
  const BodyGraph &graph_;
  ASTContext &Ctx_;
  const SourceManager &SM_;
};

} // namespace

void sinkAllocations(Task &T, const BodyFacts &facts, const BodyGraph &graph, ASTContext &Ctx) {
  Sinker(T, facts, graph, Ctx).run();
}

} // namespace mgb::rewriter
