#include "ProbeText.h"

#include "SourceText.h"

#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"

#include <functional>
#include <vector>

namespace mgb::rewriter {

using namespace clang;

namespace {

// In a template, a call with a dependent argument stays unresolved and its arguments have no
// implicit casts; an argument is still only read when every candidate callee takes it by value
// or const reference (HeCBench scan: `cudaMemcpy(d_in, in, bytes, ...)` on a `T *` between two
// cudaMalloc(..., bytes) made `bytes` look written).
bool passedByValue(const CallExpr *CE, const Expr *arg) {
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

class ProbeTextRenderer {
public:
  ProbeTextRenderer(const BodyFacts &facts, const BodyGraph &graph, ASTContext &Ctx)
      : facts_(facts), graph_(graph), Ctx_(Ctx), SM_(Ctx.getSourceManager()),
        LO_(Ctx.getLangOpts()) {}

  std::string render(Task &T) {
    task_ = &T;
    SourceLocation begin = statementBegin(T.region->body_begin()[T.first], SM_);
    std::string size;
    for (const MemOp *op : T.ops) {
      if (op->kind != OpKind::Alloc)
        continue;
      std::string product;
      for (const Expr *factor : op->sizeFactors) {
        std::optional<std::string> t = textAtBegin(factor, begin);
        if (!t)
          return "allocation size `" + messageText(factor, SM_, LO_) +
                 "` is not known before the task begins";
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
      return "grid `" + messageText(first->grid, SM_, LO_) +
             "` is not known before the task begins";
    std::optional<std::string> block = textAtBegin(first->block, begin);
    if (!block)
      return "block `" + messageText(first->block, SM_, LO_) +
             "` is not known before the task begins";
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

private:
  // Variables never written after their initialisation (safe to evaluate their initialiser early).
  bool neverWritten(const VarDecl *v) {
    if (v->getType()->isDependentType() || v->getType()->isReferenceType())
      return false;
    for (const DeclRefExpr *use : facts_.refsOf(v))
      if (!onlyReads(use, graph_))
        return false;
    return true;
  }

  // True when a statement of the task may write v before `use` is evaluated (earlier in the
  // task, or in a loop of the task around both): the value the begin probe reads would be stale
  // (`blocks = dim3(...)` between the allocations and the launch; a size reassigned before a
  // later cudaMalloc).
  bool writtenInTaskBefore(const VarDecl *v, const DeclRefExpr *use, const Task &T) {
    SourceLocation useAt = SM_.getExpansionLoc(use->getBeginLoc());
    for (const DeclRefExpr *ref : facts_.refsOf(v)) {
      if (ref == use || onlyReads(ref, graph_) || !graph_.isAncestor(T.region, ref))
        continue;
      size_t i = graph_.childIndex(T.region, ref);
      if (i < T.first || i > T.last)
        continue;
      if (SM_.isBeforeInTranslationUnit(SM_.getExpansionLoc(ref->getBeginLoc()), useAt) ||
          graph_.loopAroundBoth(ref, use, T.region))
        return true;
    }
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

  const BodyFacts &facts_;
  const BodyGraph &graph_;
  ASTContext &Ctx_;
  const SourceManager &SM_;
  const LangOptions &LO_;
  const Task *task_ = nullptr; // the task whose probe text is being rendered
};

} // namespace

bool onlyReads(const DeclRefExpr *ref, const BodyGraph &graph) {
  // A const variable is never written, whatever is done with it (`&nrow` handed to a
  // constructor taking `const int64_t *`, HeCBench tensorAccessor).
  if (const auto *VD = dyn_cast<VarDecl>(ref->getDecl());
      VD && VD->getType().isConstQualified() && !VD->getType()->isReferenceType())
    return true;
  const Expr *child = ref;
  const Stmt *P = graph.parentOf(ref);
  if (const auto *ME = dyn_cast_or_null<MemberExpr>(P)) {
    child = ME;
    P = graph.parentOf(ME);
  }
  // A kernel argument is copied into the launch: in a template (SHOC Scan's
  // `k<T, 256><<<nb, nt>>>(d, nb)`) it has no implicit cast around it, but it is still a read.
  if (const auto *K = dyn_cast_or_null<CUDAKernelCallExpr>(P))
    return K->getCallee()->IgnoreParenImpCasts() != ref;
  if (const auto *CE = dyn_cast_or_null<CallExpr>(P))
    return passedByValue(CE, child);
  return isa_and_nonnull<ImplicitCastExpr, CXXConstructExpr>(P);
}

std::string renderProbeText(Task &T, const BodyFacts &facts, const BodyGraph &graph,
                            ASTContext &Ctx) {
  return ProbeTextRenderer(facts, graph, Ctx).render(T);
}

namespace {
// Whether another function (or function template) of D's name is declared in D's context.
bool isOverloaded(const NamedDecl *D) {
  const auto *FD = dyn_cast<FunctionDecl>(D);
  if (!FD)
    return false;
  const Decl *self = FD->getCanonicalDecl();
  if (const FunctionTemplateDecl *T = FD->getPrimaryTemplate())
    self = T->getCanonicalDecl();
  for (const NamedDecl *other : FD->getDeclContext()->getRedeclContext()->lookup(FD->getDeclName()))
    if (isa<FunctionDecl, FunctionTemplateDecl>(other->getUnderlyingDecl()) &&
        other->getUnderlyingDecl()->getCanonicalDecl() != self)
      return true;
  return false;
}
// A kernel template named with explicit arguments that leave some of its parameters to deduction
// from the launch's arguments (moderngpu: `launch_box_cta_k<launch_box, func_t><<<...>>>(f, n,
// args...)`, a trailing pack): `(const void *)k<A, B>` alone would name another specialization
// (an empty pack) and instantiate it, which need not compile.
bool leavesParametersToDeduction(const Expr *callee) {
  unsigned given = 0;
  std::vector<const FunctionTemplateDecl *> templates;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(callee)) {
    given = DRE->getNumTemplateArgs();
    if (const auto *FD = dyn_cast<FunctionDecl>(DRE->getDecl()))
      if (const FunctionTemplateDecl *T = FD->getPrimaryTemplate())
        templates.push_back(T);
  } else if (const auto *U = dyn_cast<UnresolvedLookupExpr>(callee)) {
    given = U->getNumTemplateArgs();
    for (const NamedDecl *D : U->decls())
      if (const auto *T = dyn_cast<FunctionTemplateDecl>(D->getUnderlyingDecl()))
        templates.push_back(T);
  }
  for (const FunctionTemplateDecl *T : templates) {
    const TemplateParameterList *params = T->getTemplateParameters();
    if (params->hasParameterPack() || params->size() != given)
      return true;
  }
  return false;
}

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
  if (deduced && leavesParametersToDeduction(callee))
    return "nullptr";
  // `(const void *)name` cannot pick one of several functions of that name (a kernel and a host
  // function sharing it, two kernel overloads: a round-8 program); the kernel is optional.
  if (const auto *DRE = dyn_cast<DeclRefExpr>(callee); DRE && isOverloaded(DRE->getDecl()))
    return "nullptr";
  // The same in a template, where the name is still a lookup (round 14: a kernel template and a
  // host function template of one name, cudahandbook's AOStoSOA).
  if (const auto *U = dyn_cast<UnresolvedLookupExpr>(callee); U && U->getNumDecls() > 1)
    return "nullptr";
  std::optional<CharSourceRange> r = inMacroBody ? macroBodyRange(callee->getSourceRange(), SM, LO)
                                                 : fileRange(callee->getSourceRange(), SM, LO);
  return r ? textOf(*r, SM, LO) : "nullptr";
}

} // namespace mgb::rewriter
