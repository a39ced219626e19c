#include "FreeHoisting.h"

#include "ExprQueries.h"
#include "HostWork.h"
#include "SourceText.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"

namespace mgb::rewriter {

using namespace clang;

namespace {

class Hoister {
public:
  Hoister(Task &T, const BodyFacts &facts, const BodyGraph &graph, ASTContext &Ctx)
      : T_(T), facts_(facts), graph_(graph), SM_(Ctx.getSourceManager()), LO_(Ctx.getLangOpts()) {}

  void run() {
    if (!T_.isStatic || T_.untilFunctionEnd || T_.endsAtScopeExit || T_.region == nullptr)
      return;
    for (const Launch *L : T_.launches)
      if (!L->call) // a library may keep a pointer (cuSPARSE descriptors)
        return;
    for (const VarDecl *v : T_.objects)
      for (const DeclRefExpr *ref : facts_.refsOf(v))
        if (!managedUse(ref))
          return;
    // From the region's end back: free statements and host work, down to the last use.
    std::vector<std::pair<const Stmt *, const CallExpr *>> frees; // statement, its cudaFree
    size_t lastUse = T_.last;
    bool hostWork = false;
    for (; lastUse > T_.first; --lastUse) {
      const Stmt *child = T_.region->body_begin()[lastUse];
      if (const CallExpr *free = freeOf(child))
        frees.emplace_back(child, free);
      else if (isHostWork(child, T_.objects))
        hostWork = hostWork || !frees.empty();
      else
        break;
    }
    if (frees.empty() || !hostWork || lastUse == T_.last ||
        isa<ReturnStmt>(T_.region->body_begin()[lastUse]))
      return;
    size_t freeOps = 0;
    for (const MemOp *op : T_.ops)
      freeOps += op->kind == OpKind::Free;
    if (freeOps != frees.size()) // every free of the task is among them
      return;
    for (const ReturnStmt *R : T_.exits)
      if (graph_.childIndex(T_.region, R) > lastUse)
        return;
    std::vector<std::string> texts;
    std::vector<const Stmt *> statements;
    for (auto it = frees.rbegin(); it != frees.rend(); ++it) {
      std::optional<std::string> text = renamedText(it->first, it->second);
      if (!text)
        return;
      texts.push_back(*text);
      statements.push_back(it->first);
    }
    T_.hoistedFrees = std::move(texts);
    T_.disabledFrees = std::move(statements);
    T_.last = lastUse;
  }

private:
  // A reference that only hands the pointer to a runtime memory call, one of the task's launches,
  // or another pointer of its alias class; anything else may keep it past the free.
  bool managedUse(const DeclRefExpr *ref) const {
    const Stmt *child = ref;
    for (const Stmt *P = graph_.parent(ref); P; child = P, P = graph_.parent(P)) {
      if (const auto *K = dyn_cast<CUDAKernelCallExpr>(P)) {
        for (const Launch *L : T_.launches)
          if (L->call == K)
            return K->getCallee() != child && K->getConfig() != child;
        return false;
      }
      if (const auto *C = dyn_cast<CallExpr>(P)) {
        // A runtime memory call (the task's, or a copy keyed to its host buffer) uses the
        // pointer only while it runs.
        llvm::StringRef name = cudaNameOfCallee(C);
        std::optional<OpKind> kind = name.empty() ? std::nullopt : cudaOpKind(name);
        return kind && *kind != OpKind::Other && C->getCallee() != child;
      }
      if (const auto *BO = dyn_cast<BinaryOperator>(P)) {
        if (BO->isAdditiveOp())
          continue;
        if (BO->getOpcode() != BO_Assign)
          return false;
        return isObject(stripCasts(BO->getLHS())); // `q = p + 1` or `p = q`, both in the class
      }
      if (const auto *DS = dyn_cast<DeclStmt>(P)) {
        for (const Decl *D : DS->decls())
          if (const auto *V = dyn_cast<VarDecl>(D); !V || !T_.objects.count(V))
            return false;
        return true;
      }
      if (const auto *UO = dyn_cast<UnaryOperator>(P)) {
        if (UO->getOpcode() != UO_AddrOf)
          return false;
        continue;
      }
      if (isa<ImplicitCastExpr, ParenExpr, ExplicitCastExpr, ArraySubscriptExpr,
              MaterializeTemporaryExpr, ExprWithCleanups>(P))
        continue;
      return false;
    }
    return false;
  }

  bool isObject(const Expr *E) const {
    const auto *DRE = dyn_cast_or_null<DeclRefExpr>(E);
    const auto *V = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
    return V && T_.objects.count(V);
  }

  // The cudaFree call of a statement of the region that is one of the task's frees (maybe inside
  // an error-checking macro) and nothing else of the task; null for any other statement.
  const CallExpr *freeOf(const Stmt *child) const {
    const MemOp *free = nullptr;
    for (const MemOp *op : T_.ops)
      if (graph_.isAncestor(child, op->call)) {
        if (op->kind != OpKind::Free || free)
          return nullptr;
        free = op;
      }
    if (!free || cudaNameOfCallee(free->call) != "cudaFree")
      return nullptr;
    bool other = false;
    visitStmts(child, [&](const Stmt *S) {
      if (const auto *DRE = dyn_cast<DeclRefExpr>(S); DRE && !graph_.isAncestor(free->call, DRE))
        other = other || isObject(DRE);
    });
    return other ? nullptr : free->call;
  }

  // The free statement as written, its cudaFree spelled as libmgb's twin (what the renamer
  // makes of it in place); nullopt when part of it is not spelled in this file.
  std::optional<std::string> renamedText(const Stmt *S, const CallExpr *free) const {
    SourceLocation begin = statementBegin(S, SM_), end = statementEnd(S, SM_, LO_);
    std::optional<CharSourceRange> callee =
        fileRange(free->getCallee()->IgnoreParenImpCasts()->getSourceRange(), SM_, LO_);
    if (!begin.isFileID() || !end.isFileID() || !callee ||
        SM_.getFileID(begin) != SM_.getFileID(callee->getBegin()) ||
        SM_.getFileID(begin) != SM_.getFileID(end))
      return std::nullopt;
    unsigned from = SM_.getFileOffset(begin), to = SM_.getFileOffset(end),
             at = SM_.getFileOffset(callee->getBegin()),
             length = SM_.getFileOffset(callee->getEnd()) - at;
    if (at < from || at + length > to)
      return std::nullopt;
    std::string text = textOf(CharSourceRange::getCharRange(begin, end), SM_, LO_);
    if (text.substr(at - from, length) != "cudaFree")
      return std::nullopt;
    return text.replace(at - from, length, replacementName("cudaFree"));
  }

  Task &T_;
  const BodyFacts &facts_;
  const BodyGraph &graph_;
  const SourceManager &SM_;
  const LangOptions &LO_;
};

} // namespace

void hoistFrees(Task &T, const BodyFacts &facts, const BodyGraph &graph, ASTContext &Ctx) {
  Hoister(T, facts, graph, Ctx).run();
}

} // namespace mgb::rewriter
