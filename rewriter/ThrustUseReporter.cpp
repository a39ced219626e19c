#include "ThrustUseReporter.h"

#include "clang/AST/ExprCXX.h"

namespace mgb::rewriter {

using namespace clang;
using namespace clang::ast_matchers;

namespace {
// thrust's owning device containers (and their allocation functions).
const auto deviceContainer = classTemplateSpecializationDecl(
    hasAnyName("::thrust::device_vector", "::thrust::universal_vector"));

// A thrust call works on the GPU when one of its arguments is device data or a device execution
// policy: a device_ptr / device_vector iterator, thrust::device, thrust::cuda::par(.on(s)).
bool isDeviceSide(QualType type, const ASTContext &ctx) {
  std::string spelled = type.getCanonicalType().getAsString(ctx.getPrintingPolicy());
  return llvm::StringRef(spelled).contains("thrust::device_ptr<") ||
         llvm::StringRef(spelled).contains("thrust::device_reference<") ||
         llvm::StringRef(spelled).contains("thrust::detail::device_t") ||
         llvm::StringRef(spelled).contains("thrust::cuda_cub::");
}

// thrust functions that only convert or name pointers and iterators: no GPU work of their own.
bool isPointerHelper(llvm::StringRef name) {
  return name == "raw_pointer_cast" || name == "device_pointer_cast" || name.starts_with("make_") ||
         name == "distance" || name == "advance" || name == "get";
}
} // namespace

void ThrustUseReporter::registerMatchers(MatchFinder &finder) {
  finder.addMatcher(
      varDecl(hasType(hasUnqualifiedDesugaredType(recordType(hasDeclaration(deviceContainer)))))
          .bind("container"),
      this);
  // Which callee is thrust's is decided in run(): its namespaces are versioned inline ones.
  finder.addMatcher(
      callExpr(unless(cxxMemberCallExpr()), unless(cxxOperatorCallExpr())).bind("call"), this);
}

void ThrustUseReporter::run(const MatchFinder::MatchResult &result) {
  const SourceManager &SM = *result.SourceManager;
  if (const auto *var = result.Nodes.getNodeAs<VarDecl>("container")) {
    if (reportedEagerBinding(var->getLocation(), *result.Context))
      return;
    warn(var->getLocation(), *result.Context,
         "thrust device container `" + var->getNameAsString() +
             "` takes device memory outside libmgb: it is not counted in any task's "
             "reservation, and it lives on the device current at its construction");
    return;
  }
  const auto *call = result.Nodes.getNodeAs<CallExpr>("call");
  const FunctionDecl *FD = call ? call->getDirectCallee() : nullptr;
  // Most calls of a thrust TU are thrust's own, in system headers: skip them before any work.
  if (!FD || SM.isInSystemHeader(SM.getExpansionLoc(call->getBeginLoc())) ||
      isa<CXXMethodDecl>(FD) || !FD->getIdentifier() || isPointerHelper(FD->getName()))
    return;
  const DeclContext *ns = FD->getEnclosingNamespaceContext();
  while (ns && !(isa<NamespaceDecl>(ns) && cast<NamespaceDecl>(ns)->getName() == "thrust" &&
                 ns->getParent()->isTranslationUnit()))
    ns = ns->getParent();
  if (!ns)
    return;
  bool device = FD->getName() == "device_malloc" || FD->getName() == "device_new";
  for (const Expr *arg : call->arguments())
    device = device || isDeviceSide(arg->getType(), *result.Context);
  if (device && !reportedEagerBinding(call->getBeginLoc(), *result.Context))
    warn(call->getBeginLoc(), *result.Context,
         "thrust::" + FD->getName().str() +
             " works on the GPU through thrust: its kernels and temporary memory are not "
             "managed by mgb");
}

bool ThrustUseReporter::reportedEagerBinding(SourceLocation loc, const ASTContext &Ctx) {
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation at = SM.getExpansionLoc(loc);
  std::optional<std::string> file = edits_.editableMainFile(SM);
  if (!file || !at.isValid() || SM.isInSystemHeader(at) || !edits_.holdsLibraryMemory(*file))
    return false;
  // thrust's memory is libmgb's here (ApiCallRenamer routed its allocations): one report per file
  // says what that costs; each container and call would only repeat it.
  if (eagerFilesReported_.insert(*file).second)
    warn(loc, Ctx,
         "thrust takes device memory and launches kernels inside its own headers: libmgb counts "
         "that memory in one task for the whole process, and the program binds its memory "
         "eagerly (no task per region)");
  return true;
}

void ThrustUseReporter::warn(SourceLocation loc, const ASTContext &Ctx, const std::string &what) {
  const SourceManager &SM = Ctx.getSourceManager();
  SourceLocation at = SM.getExpansionLoc(loc);
  // Only the user's code: thrust calls itself inside its own (system) headers.
  if (!at.isValid() || SM.isInSystemHeader(at) || !edits_.isEditable(at, SM))
    return;
  diagnostics_.warn(at, Ctx, what);
}

} // namespace mgb::rewriter
