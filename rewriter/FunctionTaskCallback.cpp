#include "FunctionTaskCallback.h"

#include "ProbeWriter.h"
#include "SourceText.h"
#include "TaskPlanner.h"

namespace mgb::rewriter {

using namespace clang;
using namespace clang::ast_matchers;

void FunctionTaskCallback::registerMatchers(MatchFinder &finder) {
  finder.addMatcher(functionDecl(isDefinition(), hasBody(compoundStmt())).bind("function"), this);
  finder.addMatcher(lambdaExpr().bind("lambda"), this);
}

void FunctionTaskCallback::run(const MatchFinder::MatchResult &result) {
  const FunctionDecl *FD = result.Nodes.getNodeAs<FunctionDecl>("function");
  if (const auto *lambda = result.Nodes.getNodeAs<LambdaExpr>("lambda"))
    FD = lambda->getCallOperator();
  if (!FD || !FD->hasBody())
    return;
  // Plan what the user wrote once: templates as written, never their instantiations (a lambda
  // inside an instantiated function is an instantiation too).
  for (const DeclContext *DC = FD; DC; DC = DC->getParent())
    if (const auto *F = dyn_cast<FunctionDecl>(DC); F && F->isTemplateInstantiation())
      return;
  if (const auto *M = dyn_cast<CXXMethodDecl>(FD);
      M && M->getParent()->isLambda() && !result.Nodes.getNodeAs<LambdaExpr>("lambda"))
    return;
  const SourceManager &SM = *result.SourceManager;
  if (!edits_.isEditable(SM.getExpansionLoc(FD->getLocation()), SM))
    return;
  const Stmt *body = FD->getBody();
  FunctionPlan plan = planFunction(FD, body, *result.Context);
  if (plan.launches.empty())
    return;
  std::string text;
  llvm::raw_string_ostream explain(text);
  writeProbes(plan, body, *result.Context, edits_, explain, diagnostics_);
  // A header's functions are planned once per translation unit: report them once.
  if (explained_.insert(explain.str()).second)
    explain_ << explain.str();
}

} // namespace mgb::rewriter
