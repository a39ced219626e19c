#include "CudaStructPointerWriter.h"

#include "CudaApi.h"
#include "ExprQueries.h"
#include "SourceText.h"

#include "clang/AST/Attr.h"
#include "clang/AST/Expr.h"

namespace mgb::rewriter {

using namespace clang;
using namespace clang::ast_matchers;

void CudaStructPointerWriter::registerMatchers(MatchFinder &finder) {
  auto deviceCode = functionDecl(anyOf(hasAttr(attr::CUDAGlobal), hasAttr(attr::CUDADevice)));
  finder.addMatcher(binaryOperator(hasOperatorName("="), hasLHS(memberExpr().bind("field")),
                                   hasRHS(expr().bind("value")), unless(hasAncestor(deviceCode)))
                        .bind("store"),
                    this);
}

void CudaStructPointerWriter::run(const MatchFinder::MatchResult &result) {
  const auto *field = result.Nodes.getNodeAs<MemberExpr>("field");
  const auto *value = result.Nodes.getNodeAs<Expr>("value");
  const auto *FD = dyn_cast<FieldDecl>(field->getMemberDecl());
  if (!FD || !FD->getType()->isPointerType() || !isCudaHostStruct(FD->getParent()))
    return;
  ASTContext &Ctx = *result.Context;
  if (!mayHoldDeviceMemory(value, Ctx))
    return;
  if (const auto *CE = dyn_cast<CallExpr>(value->IgnoreParenImpCasts()))
    if (const FunctionDecl *callee = CE->getDirectCallee();
        callee && (callee->getName() == "mgb_arg" || callee->getName() == "mgb_real_ptr"))
      return; // rewritten already
  const SourceManager &SM = *result.SourceManager;
  std::optional<CharSourceRange> r = editableRange(value->getSourceRange(), SM, Ctx.getLangOpts());
  if (!r || !edits_.isEditable(r->getBegin(), SM))
    return;
  edits_.insert(r->getBegin(), Ctx.getLangOpts().CPlusPlus ? "mgb_arg(" : "mgb_real_ptr(", SM);
  edits_.insert(r->getEnd(), ")", SM);
}

} // namespace mgb::rewriter
