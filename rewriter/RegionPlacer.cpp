#include "RegionPlacer.h"

#include "ProbeText.h"
#include "SourceText.h"

#include "clang/AST/ExprCXX.h"

#include <functional>

namespace mgb::rewriter {

using namespace clang;

namespace {

class Placer {
public:
  Placer(const FunctionPlan &plan, const BodyFacts &facts, const BodyGraph &graph,
         const AliasClasses &aliases, ASTContext &Ctx)
      : plan_(plan), facts_(facts), graph_(graph), aliases_(aliases), Ctx_(Ctx),
        SM_(Ctx.getSourceManager()), LO_(Ctx.getLangOpts()) {}

  std::string place(Task &T, const std::vector<const Stmt *> &handleNodes) {
    if (facts_.hasGoto)
      return "the function uses goto";
    if (!graph_.hasCfg())
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
    const CFGBlock *allocBlock = graph_.blockOf(firstAlloc->call);
    for (const Stmt *n : nodes) {
      const CFGBlock *b = graph_.blockOf(n);
      if (!allocBlock || !b || !graph_.dominates(allocBlock, b))
        return "allocation at " + siteOf(firstAlloc->call->getBeginLoc(), SM_) +
               " does not dominate the operation at " + siteOf(n->getBeginLoc(), SM_);
    }
    // Post-dominance: memory freed on every path after the launches closes the task there;
    // otherwise the task lasts until the function returns.
    T.untilFunctionEnd = !freedAfterLaunches(T);
    for (const VarDecl *v : T.objects)
      for (const DeclRefExpr *use : facts_.refsOf(v))
        nodes.push_back(use);
    nodes.insert(nodes.end(), handleNodes.begin(), handleNodes.end());
    if (std::string why = findRegion(T, nodes); !why.empty())
      return why;
    for (const MemOp *op : T.ops)
      if ((op->kind == OpKind::Alloc || op->kind == OpKind::Free) &&
          graph_.loopBetween(op->call, T.region))
        return "memory allocated or freed in a loop at " + siteOf(op->call->getBeginLoc(), SM_) +
               " that the task does not enclose";
    if (std::string why = checkExits(T); !why.empty())
      return why;
    return renderProbeText(T, facts_, graph_, Ctx_);
  }

private:
  bool freedAfterLaunches(const Task &T) {
    std::set<const VarDecl *> classes;
    for (const VarDecl *v : T.objects)
      classes.insert(aliases_.leader(v));
    for (const VarDecl *c : classes) {
      bool freed = false;
      for (const MemOp *op : T.ops) {
        if (op->kind != OpKind::Free || aliases_.leader(op->object) != c)
          continue;
        const CFGBlock *fb = graph_.blockOf(op->call);
        bool postDominatesAll = fb != nullptr;
        for (const Launch *L : T.launches) {
          const CFGBlock *lb = graph_.blockOf(L->expr());
          postDominatesAll = postDominatesAll && lb &&
                             (graph_.postDominates(fb, lb) || graph_.onEveryReturningPath(fb, lb));
        }
        freed |= postDominatesAll;
      }
      if (!freed)
        return false;
    }
    return true;
  }

  // The innermost compound statement holding every node, and the span of its statements they use.
  std::string findRegion(Task &T, const std::vector<const Stmt *> &nodes) {
    auto chain = [&](const Stmt *S) {
      std::vector<const Stmt *> up;
      for (const Stmt *P = S; P; P = graph_.parent(P))
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
      region = dyn_cast<CompoundStmt>(graph_.body());
    if (!region)
      return "no enclosing block holds all of its operations";
    T.region = region;
    T.first = region->size();
    T.last = 0;
    for (const Stmt *n : nodes) {
      size_t i = graph_.childIndex(region, n);
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

  const FunctionPlan &plan_;
  const BodyFacts &facts_;
  const BodyGraph &graph_;
  const AliasClasses &aliases_;
  ASTContext &Ctx_;
  const SourceManager &SM_;
  const LangOptions &LO_;
};

} // namespace

std::string placeStatically(Task &T, const std::vector<const clang::Stmt *> &handleNodes,
                            const FunctionPlan &plan, const BodyFacts &facts,
                            const BodyGraph &graph, const AliasClasses &aliases, ASTContext &Ctx) {
  return Placer(plan, facts, graph, aliases, Ctx).place(T, handleNodes);
}

} // namespace mgb::rewriter
