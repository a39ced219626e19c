#include "ForeignStreamWrapper.h"

#include "CudaApi.h"
#include "SourceText.h"

#include "clang/AST/ExprCXX.h"

namespace mgb::rewriter {

using namespace clang;
using namespace clang::ast_matchers;

namespace {
// cudaStream_t (and the driver API's CUstream): a pointer to struct CUstream_st, by value or by
// const reference (thrust's `par.on(s)`); a non-const reference is an output, left alone.
bool isStreamType(QualType T) {
  if (const auto *R = T->getAs<ReferenceType>()) {
    if (!R->getPointeeType().isConstQualified())
      return false;
    T = R->getPointeeType();
  }
  const auto *P = T.getCanonicalType()->getAs<PointerType>();
  const RecordDecl *R = P ? P->getPointeeType()->getAsRecordDecl() : nullptr;
  return R && R->getIdentifier() && R->getName() == "CUstream_st";
}
} // namespace

void ForeignStreamWrapper::registerMatchers(MatchFinder &finder) {
  finder.addMatcher(callExpr(unless(cudaKernelCallExpr()), callee(functionDecl())).bind("call"),
                    this);
}

void ForeignStreamWrapper::run(const MatchFinder::MatchResult &result) {
  const auto *call = result.Nodes.getNodeAs<CallExpr>("call");
  const FunctionDecl *FD = call->getDirectCallee();
  const SourceManager &SM = *result.SourceManager;
  if (!FD || !FD->getIdentifier() || SM.isInSystemHeader(SM.getExpansionLoc(call->getBeginLoc())))
    return;
  const FunctionDecl *pattern = templatePattern(FD);
  bool runtimeWithoutTwin = isCudaRuntimeDecl(pattern) && !cudaOpKind(FD->getName()) &&
                            !FD->getName().starts_with("mgb_");
  bool library = !cudaLibraryOf(pattern).empty();
  if (!runtimeWithoutTwin && !library)
    return;
  const LangOptions &LO = result.Context->getLangOpts();
  for (unsigned i = 0; i < call->getNumArgs() && i < FD->getNumParams(); ++i) {
    const Expr *arg = call->getArg(i);
    if (isa<CXXDefaultArgExpr>(arg) || !isStreamType(FD->getParamDecl(i)->getType()))
      continue;
    const Expr *bare = arg->IgnoreParenImpCasts();
    if (bare->isNullPointerConstant(*result.Context, Expr::NPC_ValueDependentIsNotNull))
      continue; // the default stream is no stand-in
    if (const auto *CE = dyn_cast<CallExpr>(bare))
      if (const FunctionDecl *F = CE->getDirectCallee(); F && F->getName() == "mgb_real_stream")
        continue; // rewritten already
    std::optional<CharSourceRange> r = editableRange(arg->getSourceRange(), SM, LO);
    if (!r || !edits_.isEditable(r->getBegin(), SM))
      continue;
    edits_.insert(r->getBegin(), "mgb_real_stream(", SM);
    edits_.insert(r->getEnd(), ")", SM);
  }
}

} // namespace mgb::rewriter
