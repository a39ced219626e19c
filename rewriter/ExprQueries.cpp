#include "ExprQueries.h"

#include "CudaApi.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"

namespace mgb::rewriter {

using namespace clang;

const Expr *stripCasts(const Expr *E) { return E ? E->IgnoreParenCasts() : nullptr; }

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

} // namespace mgb::rewriter
