#include "CooperativeLaunchWriter.h"

#include "CudaApi.h"
#include "SourceText.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ParentMapContext.h"

namespace mgb::rewriter {

using namespace clang;
using namespace clang::ast_matchers;

namespace {
// The variables of `void *args[] = {&a, (void *)&b, ...}`; empty when args is spelled otherwise.
std::vector<const VarDecl *> argumentVariables(const Expr *args) {
  const auto *DRE = dyn_cast<DeclRefExpr>(args->IgnoreParenImpCasts());
  const auto *array = DRE ? dyn_cast<VarDecl>(DRE->getDecl()) : nullptr;
  if (!array || !array->hasLocalStorage() || !array->getType()->isConstantArrayType())
    return {};
  const auto *init = dyn_cast_or_null<InitListExpr>(array->getInit());
  if (!init || init->getNumInits() == 0)
    return {};
  std::vector<const VarDecl *> vars;
  for (const Expr *e : init->inits()) {
    const auto *UO = dyn_cast<UnaryOperator>(e->IgnoreParenCasts());
    const auto *var = UO && UO->getOpcode() == UO_AddrOf
                          ? dyn_cast<DeclRefExpr>(UO->getSubExpr()->IgnoreParens())
                          : nullptr;
    const auto *VD = var ? dyn_cast<VarDecl>(var->getDecl()) : nullptr;
    if (!VD)
      return {};
    vars.push_back(VD);
  }
  return vars;
}

// The statement holding E directly inside a block (null when E is inside a declaration, whose
// variable the braces of the rewrite would hide).
const Stmt *statementInBlock(const Expr *E, ASTContext &Ctx) {
  DynTypedNode node = DynTypedNode::create(*E);
  for (;;) {
    DynTypedNodeList parents = Ctx.getParents(node);
    if (parents.empty())
      return nullptr;
    if (parents[0].get<CompoundStmt>())
      return node.get<Stmt>();
    if (parents[0].get<DeclStmt>() || parents[0].get<VarDecl>() || !parents[0].get<Stmt>())
      return nullptr;
    node = parents[0];
  }
}
} // namespace

void CooperativeLaunchWriter::registerMatchers(MatchFinder &finder) {
  finder.addMatcher(
      callExpr(callee(functionDecl(hasName("cudaLaunchCooperativeKernel"))), argumentCountIs(6))
          .bind("call"),
      this);
}

void CooperativeLaunchWriter::run(const MatchFinder::MatchResult &result) {
  const auto *call = result.Nodes.getNodeAs<CallExpr>("call");
  const SourceManager &SM = *result.SourceManager;
  const LangOptions &LO = result.Context->getLangOpts();
  const FunctionDecl *FD = call->getDirectCallee();
  SourceLocation at = SM.getExpansionLoc(call->getBeginLoc());
  if (!isCudaRuntimeDecl(templatePattern(FD)) || SM.isInSystemHeader(at) ||
      !edits_.isEditable(at, SM))
    return;
  const Expr *args = call->getArg(3);
  if (const auto *DRE = dyn_cast<DeclRefExpr>(args->IgnoreParenImpCasts());
      DRE && DRE->getDecl()->getName().starts_with("mgb_"))
    return; // rewritten already
  std::vector<const VarDecl *> vars = argumentVariables(args);
  const Stmt *S = vars.empty() ? nullptr : statementInBlock(call, *result.Context);
  std::optional<CharSourceRange> func = fileRange(call->getArg(0)->getSourceRange(), SM, LO),
                                 grid = fileRange(call->getArg(1)->getSourceRange(), SM, LO),
                                 block = fileRange(call->getArg(2)->getSourceRange(), SM, LO),
                                 array = fileRange(args->getSourceRange(), SM, LO);
  std::string site = siteOf(at, SM);
  if (!LO.CPlusPlus) { // the routed form (mgb_prepare, mgb_arg, auto) is C++
    diagnostics_.warn(at, *result.Context,
                      "cudaLaunchCooperativeKernel in a C file cannot be routed through "
                      "mgb_prepare: the program binds its memory eagerly (no stand-ins)");
    edits_.noteUnseenCode(SM);
    return;
  }
  if (!S || !func || !grid || !block || !array) {
    diagnostics_.warn(at, *result.Context,
                      "cudaLaunchCooperativeKernel has no mgb twin and its arguments are not a "
                      "local `{&a, &b, ...}` array: they cannot be translated, so the program "
                      "binds its memory eagerly (no stand-ins)");
    edits_.noteUnseenCode(SM);
    return;
  }
  // Names unique per call site: `mgb_coop_L_C` (its values `mgb_coop_L_C_i`).
  std::string name = "mgb_coop_" + std::to_string(SM.getExpansionLineNumber(at)) + "_" +
                     std::to_string(SM.getExpansionColumnNumber(at));
  std::string before = "{ mgb_prepare(mgb_dim(" + textOf(*grid, SM, LO) + "), mgb_dim(" +
                       textOf(*block, SM, LO) + "), (const void *)(" + textOf(*func, SM, LO) +
                       "), \"" + site + "\"";
  for (const VarDecl *v : vars)
    before += ", " + v->getNameAsString();
  before += "); ";
  std::string list;
  for (size_t i = 0; i < vars.size(); ++i) {
    std::string value = name + "_" + std::to_string(i);
    before += "auto " + value + " = mgb_arg(" + vars[i]->getNameAsString() + "); ";
    list += (i ? ", &" : "&") + value;
  }
  before += "void *" + name + "[] = {" + list + "}; ";
  edits_.insert(statementBegin(S, SM), before, SM);
  edits_.replace(*array, name, SM);
  edits_.insert(statementEnd(S, SM, LO), " }", SM);
}

} // namespace mgb::rewriter
