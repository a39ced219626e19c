#include "UnmanagedLaunchReporter.h"

#include "CudaApi.h"
#include "SourceText.h"

#include "clang/AST/ExprCXX.h"

namespace mgb::rewriter {

using namespace clang;
using namespace clang::ast_matchers;

namespace {
// CUDA runtime entry points that start kernels but have no mgb_ twin in mgb.h.
bool isUntwinnedLaunchApi(llvm::StringRef name) {
  return name == "cudaLaunchCooperativeKernel" ||
         name == "cudaLaunchCooperativeKernelMultiDevice" || name == "cudaLaunchKernelEx" ||
         name == "cudaLaunchKernelExC" || name == "cudaGraphLaunch";
}
} // namespace

void UnmanagedLaunchReporter::registerMatchers(MatchFinder &finder) {
  finder.addMatcher(cudaKernelCallExpr().bind("launch"), this);
  finder.addMatcher(callExpr(callee(functionDecl(hasAnyName(
                                 "cudaLaunchCooperativeKernel",
                                 "cudaLaunchCooperativeKernelMultiDevice", "cudaLaunchKernelEx",
                                 "cudaLaunchKernelExC", "cudaGraphLaunch"))))
                        .bind("api"),
                    this);
}

void UnmanagedLaunchReporter::run(const MatchFinder::MatchResult &result) {
  const SourceManager &SM = *result.SourceManager;
  if (const auto *launch = result.Nodes.getNodeAs<CUDAKernelCallExpr>("launch")) {
    SourceLocation at = SM.getExpansionLoc(launch->getBeginLoc());
    if (at.isValid() && !SM.isInSystemHeader(at) && !edits_.isEditable(at, SM))
      warn(siteOf(at, SM) + ": warning: this launch is in a file outside --root and is not "
                            "rewritten: it runs unmanaged (widen --root to include " +
           SM.getFilename(at).str() + ")");
    return;
  }
  const auto *call = result.Nodes.getNodeAs<CallExpr>("api");
  const FunctionDecl *FD = call ? call->getDirectCallee() : nullptr;
  if (!FD)
    return;
  const FunctionDecl *pattern =
      FD->getPrimaryTemplate() ? FD->getPrimaryTemplate()->getTemplatedDecl() : FD;
  SourceLocation at = SM.getExpansionLoc(call->getBeginLoc());
  if (!isCudaRuntimeDecl(pattern) || !isUntwinnedLaunchApi(FD->getName()) ||
      SM.isInSystemHeader(at))
    return;
  warn(siteOf(at, SM) + ": warning: " + FD->getName().str() +
       " has no mgb twin: this launch runs unmanaged (on the device the task's memory is on)");
}

void UnmanagedLaunchReporter::warn(const std::string &text) {
  if (reported_.insert(text).second)
    warnings_ << text << "\n";
}

} // namespace mgb::rewriter
