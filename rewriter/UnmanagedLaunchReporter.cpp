#include "UnmanagedLaunchReporter.h"

#include "CudaApi.h"

#include "clang/AST/ExprCXX.h"

#include <vector>

namespace mgb::rewriter {

using namespace clang;
using namespace clang::ast_matchers;

namespace {
// CUDA runtime entry points with no mgb_ twin in mgb.h that start kernels or take device memory:
// the rewrite cannot route them through libmgb, so each call is reported
// (cudaLaunchCooperativeKernel: CooperativeLaunchWriter, which routes the common form and reports
// the others).
struct UntwinnedApi {
  const char *name;
  const char *consequence;
};
constexpr const char *kLaunch = "its arguments cannot be translated, so the program binds its "
                                "memory eagerly (no stand-ins); it runs on the current device";
constexpr const char *kAlloc = "this device memory is not counted in any task's reservation, and "
                               "it lives on the device current at the call";
constexpr UntwinnedApi kUntwinned[] = {
    {"cudaLaunchCooperativeKernelMultiDevice", kLaunch},
    {"cudaMallocArray", kAlloc},
    {"cudaMalloc3D", kAlloc},
    {"cudaMalloc3DArray", kAlloc},
    {"cudaMallocMipmappedArray", kAlloc},
    {"cudaMallocAsync", kAlloc},
    {"cudaMallocFromPoolAsync", kAlloc},
};

const UntwinnedApi *findUntwinned(llvm::StringRef name) {
  for (const UntwinnedApi &api : kUntwinned)
    if (name == api.name)
      return &api;
  return nullptr;
}
} // namespace

void UnmanagedLaunchReporter::registerMatchers(MatchFinder &finder) {
  finder.addMatcher(cudaKernelCallExpr().bind("launch"), this);
  std::vector<llvm::StringRef> names;
  for (const UntwinnedApi &api : kUntwinned)
    names.push_back(api.name);
  finder.addMatcher(callExpr(callee(functionDecl(hasAnyName(names)))).bind("api"), this);
}

void UnmanagedLaunchReporter::run(const MatchFinder::MatchResult &result) {
  const SourceManager &SM = *result.SourceManager;
  if (const auto *launch = result.Nodes.getNodeAs<CUDAKernelCallExpr>("launch")) {
    SourceLocation at = SM.getExpansionLoc(launch->getBeginLoc());
    if (at.isValid() && !SM.isInSystemHeader(at) && !edits_.isEditable(at, SM)) {
      diagnostics_.warn(at, *result.Context,
                        "this launch is in a file outside --root and is not rewritten: the "
                        "program binds its memory eagerly (no stand-ins; widen --root, or "
                        "MGB_ROOT for the drivers, to include " +
                            SM.getFilename(at).str() + " for finer placement)");
      edits_.noteUnseenCode(SM);
    }
    return;
  }
  const auto *call = result.Nodes.getNodeAs<CallExpr>("api");
  const FunctionDecl *FD = call ? call->getDirectCallee() : nullptr;
  if (!FD)
    return;
  SourceLocation at = SM.getExpansionLoc(call->getBeginLoc());
  const UntwinnedApi *api = findUntwinned(FD->getName());
  if (!api || !isCudaRuntimeDecl(templatePattern(FD)) || SM.isInSystemHeader(at))
    return;
  diagnostics_.warn(at, *result.Context,
                    FD->getName().str() + " has no mgb twin: " + api->consequence);
  if (api->consequence == kLaunch)
    edits_.noteUnseenCode(SM);
}

} // namespace mgb::rewriter
