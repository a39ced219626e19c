#include "TaskPlanner.h"

#include "AliasClasses.h"
#include "BodyFacts.h"
#include "BodyGraph.h"
#include "ExprQueries.h"
#include "AllocationSinking.h"
#include "FreeHoisting.h"
#include "LaunchObjects.h"
#include "RegionPlacer.h"
#include "SourceText.h"

#include "llvm/ADT/EquivalenceClasses.h"

#include <map>

namespace mgb::rewriter {

using namespace clang;

namespace {

// Algorithm 1's loop over one function: group, place, merge, demote.
class Planner {
public:
  Planner(FunctionPlan &plan, const BodyFacts &facts, const BodyGraph &graph,
          const AliasClasses &aliases, ASTContext &Ctx)
      : plan_(plan), facts_(facts), graph_(graph), aliases_(aliases), Ctx_(Ctx),
        SM_(Ctx.getSourceManager()) {}

  void run() {
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
      // Compiler guidance, once the regions are final: frees move up to the last use, the begin
      // down to the first.
      for (Task &T : tasks) {
        hoistFrees(T, facts_, graph_, Ctx_);
        sinkAllocations(T, facts_, graph_, Ctx_);
      }
      plan_.tasks = std::move(tasks);
      return;
    }
  }

private:
  // Algorithm 1: unit tasks sharing a memory object (alias class) merge.
  std::vector<std::vector<const Launch *>> initialGroups() {
    llvm::EquivalenceClasses<const Launch *> merged;
    std::map<const VarDecl *, const Launch *> ownerOfClass;
    for (const Launch &L : plan_.launches) {
      merged.insert(&L);
      for (const VarDecl *v : L.objects) {
        auto [it, fresh] = ownerOfClass.emplace(aliases_.leader(v), &L);
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

  Task evaluate(const std::vector<const Launch *> &group, const std::set<const Launch *> &forced) {
    Task T;
    T.launches = group;
    for (const Launch *L : group) {
      if (!L->lazyReason.empty() && T.lazyReason.empty())
        T.lazyReason = L->lazyReason;
      if (forced.count(L) && T.lazyReason.empty())
        T.lazyReason = "its region would also hold operations of lazily bound memory";
      for (const VarDecl *v : L->objects)
        for (const VarDecl *m : aliases_.members(v))
          T.objects.insert(m);
    }
    for (const MemOp &op : plan_.ops)
      if (op.object && T.objects.count(op.object))
        T.ops.push_back(&op);
    if (T.lazyReason.empty()) {
      // Library handles the task's library calls use start (and end) with the task when created
      // in this function and the region can cover them; otherwise today's region and a warning.
      HandleUses handles = handleUses(T);
      std::vector<std::pair<SourceLocation, std::string>> &outside = handles.outside;
      std::string why = place(T, handles.calls);
      if (!why.empty() && !handles.calls.empty()) {
        outside.insert(outside.end(), handles.created.begin(), handles.created.end());
        T.exits.clear();
        T.endsAtScopeExit = false;
        why = place(T, {});
      }
      T.lazyReason = why;
      if (why.empty())
        for (const auto &[at, name] : outside)
          T.warnings.emplace_back(at, "library handle created outside the task: it stays on the "
                                      "device current at its creation, which may not be the "
                                      "task's GPU" +
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
        if (!v || !isLibraryHandle(v) || !seen.insert(v).second)
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

  std::string place(Task &T, const std::vector<const Stmt *> &handleNodes) {
    return placeStatically(T, handleNodes, plan_, facts_, graph_, aliases_, Ctx_);
  }

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
        size_t i = graph_.childIndex(T.region, op.call);
        bool inside = graph_.isAncestor(T.region, op.call) && i >= T.first && i <= T.last;
        if (inside) {
          for (const Launch *L : T.launches)
            forced.insert(L);
          return true;
        }
      }
    }
    return false;
  }

  FunctionPlan &plan_;
  const BodyFacts &facts_;
  const BodyGraph &graph_;
  const AliasClasses &aliases_;
  ASTContext &Ctx_;
  const SourceManager &SM_;
};

} // namespace

FunctionPlan planFunction(const FunctionDecl *FD, const Stmt *body, ASTContext &Ctx) {
  FunctionPlan plan;
  plan.name = FD->getNameAsString();
  plan.location = FD->getLocation();
  plan.isMain = FD->isMain();
  // Device code (kernels, __device__ and __host__ __device__ helpers) is compiled for the GPU
  // too, where no probe may go: it is never planned.
  if (FD->hasAttr<CUDAGlobalAttr>() || FD->hasAttr<CUDADeviceAttr>())
    return plan;
  BodyFacts facts = collectBodyFacts(FD, body, plan);
  if (plan.alreadyRewritten || plan.launches.empty())
    return plan;
  BodyGraph graph(FD, body, Ctx);
  AliasClasses aliases(plan, facts, graph, Ctx);
  describeLaunches(plan, facts, aliases, Ctx);
  Planner(plan, facts, graph, aliases, Ctx).run();
  return plan;
}

} // namespace mgb::rewriter
