#include "ApiCallRenamer.h"

#include "CudaApi.h"
#include "SourceText.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/PrettyPrinter.h"
#include "clang/Lex/Lexer.h"
#include "llvm/Support/Path.h"

namespace mgb::rewriter {

using namespace clang;
using namespace clang::ast_matchers;

void ApiCallRenamer::registerMatchers(MatchFinder &finder) {
  finder.addMatcher(callExpr(unless(cudaKernelCallExpr())).bind("call"), this);
  // A runtime function named as a value, not called: `std::unique_ptr<float,
  // decltype(&cudaFree)> p(q, &cudaFree)`. Left as CUDA's, it would free mgb-managed memory
  // behind libmgb's back.
  finder.addMatcher(declRefExpr(to(functionDecl())).bind("value"), this);
}

void ApiCallRenamer::run(const MatchFinder::MatchResult &result) {
  const SourceManager &SM = *result.SourceManager;
  if (const auto *value = result.Nodes.getNodeAs<DeclRefExpr>("value")) {
    const auto *FD = cast<FunctionDecl>(value->getDecl());
    // Template specializations (CUDA's C++ overloads) have no mgb_ twin of the same shape.
    if (!FD->getIdentifier() || FD->getPrimaryTemplate() || !cudaOpKind(FD->getName()) ||
        !isCudaRuntimeDecl(FD) || callees_.count(value))
      return;
    renameToken(value->getLocation(), FD->getName(), result);
    return;
  }
  const auto *call = result.Nodes.getNodeAs<CallExpr>("call");
  // Matches come in traversal order, a call before its callee: the callee is no value.
  callees_.insert(call->getCallee()->IgnoreParenImpCasts());
  bool rewritten = false;
  llvm::StringRef name = cudaNameOfCallee(call, &rewritten);
  if (name.empty() || rewritten)
    return;
  const Expr *callee = call->getCallee()->IgnoreParenImpCasts();
  SourceLocation nameLoc;
  if (const auto *DRE = dyn_cast<DeclRefExpr>(callee)) {
    nameLoc = DRE->getLocation();
  } else if (const auto *U = dyn_cast<UnresolvedLookupExpr>(callee)) {
    nameLoc = U->getNameLoc();
  } else {
    return;
  }
  if (!renameToken(nameLoc, name, result))
    return;
  warnIfRemoved(call, name, *result.Context);
  // mgb_ twins declare no default arguments: spell out the ones the call relies on.
  std::string defaults;
  PrintingPolicy policy(result.Context->getLangOpts());
  for (const Expr *arg : call->arguments())
    if (const auto *D = dyn_cast<CXXDefaultArgExpr>(arg)) {
      std::string text;
      llvm::raw_string_ostream os(text);
      D->getExpr()->printPretty(os, nullptr, policy);
      defaults += ", " + os.str();
    }
  if (!defaults.empty())
    edits_.insert(SM.getSpellingLoc(call->getRParenLoc()), defaults, SM);
  // CUDA's templates that take the kernel itself (cudaLaunchKernel<T>, cudaLaunchKernelEx...)
  // have templates of the same shape in mgb.h: the call stays as written.
}

void ApiCallRenamer::warnIfRemoved(const CallExpr *call, llvm::StringRef name,
                                   const ASTContext &Ctx) {
  const FunctionDecl *callee = call->getDirectCallee();
  if (!callee)
    return;
  const SourceManager &SM = Ctx.getSourceManager();
  if (llvm::sys::path::filename(SM.getFilename(SM.getSpellingLoc(callee->getLocation()))) !=
      "mgb_removed_cuda_api.h")
    return;
  diagnostics_.warn(call->getBeginLoc(), Ctx,
                    "`" + name.str() +
                        "` is not in this CUDA toolkit's runtime (removed in CUDA "
                        "12), so nvcc rejects this call as written; the rewrite calls `" +
                        replacementName(name) + "`, which replaced it");
}

bool ApiCallRenamer::allocatesInLibraryHeader(SourceLocation at, llvm::StringRef name,
                                              const SourceManager &SM) {
  std::optional<OpKind> kind = cudaOpKind(name);
  if (kind != OpKind::Alloc && kind != OpKind::Free)
    return false;
  // CUDA's own runtime headers (cuda_runtime.h's template overloads call ::cudaMalloc) allocate
  // nothing by themselves.
  llvm::StringRef file = llvm::sys::path::filename(SM.getFilename(at));
  return file != "cuda_runtime.h" && file != "cuda_runtime_api.h";
}

void ApiCallRenamer::renameByDefine(FileID file, llvm::StringRef name, const SourceManager &SM) {
  if (OptionalFileEntryRef entry = SM.getFileEntryRefForID(file))
    edits_.macroFallbacks(EditSet::canonicalPath(entry->getName())).insert(name.str());
}

bool ApiCallRenamer::renameToken(SourceLocation nameLoc, llvm::StringRef name,
                                 const MatchFinder::MatchResult &result) {
  const SourceManager &SM = *result.SourceManager;
  SourceLocation expansion = SM.getExpansionLoc(nameLoc);
  if (!edits_.isEditable(expansion, SM)) {
    // A project header outside --root (cuda-samples' Common/helper_cuda.h calling cudaSetDevice)
    // is not rewritten: a `#define` at the top of the translation unit's source renames the call
    // there (the source includes cuda_runtime.h and mgb.h before it).
    SourceLocation main = SM.getLocForStartOfFile(SM.getMainFileID());
    if (!edits_.isEditable(main, SM))
      return false;
    bool fallback = !SM.isInSystemHeader(expansion);
    if (!fallback && allocatesInLibraryHeader(expansion, name, SM)) {
      // thrust's containers and temporary buffers, CUB's caching allocator: device memory taken
      // in headers mgb does not rewrite, then handed to kernels mgb never sees. No stand-in may
      // reach them, so the program binds eagerly, and the `#define` routes these calls through
      // libmgb, which counts the memory in the process's task (docs/rewriter.md, "thrust").
      edits_.noteLibraryMemory(SM);
      fallback = true;
    }
    if (fallback)
      renameByDefine(SM.getMainFileID(), name, SM);
    return false;
  }
  // The name token where it is spelled: the file, a macro argument, or a project macro's body.
  SourceLocation spelling = SM.getSpellingLoc(nameLoc);
  if (SM.isMacroArgExpansion(nameLoc)) {
    // In a macro's argument (`checkCudaErrors(cudaMalloc(&p, n))`) the call may also be
    // stringified (`#val`, printed when it fails): a `#define` renames the call and leaves the
    // text the program prints as written.
    renameByDefine(SM.getFileID(spelling), name, SM);
    return false;
  }
  std::string twin = replacementName(name);
  unsigned length = Lexer::MeasureTokenLength(spelling, SM, result.Context->getLangOpts());
  if (!edits_.replace(CharSourceRange::getCharRange(spelling, spelling.getLocWithOffset(length)),
                      twin, SM)) {
    // Spelled where it cannot be edited (token pasting, a system macro): `#define` fallback.
    renameByDefine(SM.getFileID(expansion), name, SM);
    return false;
  }
  return true;
}

} // namespace mgb::rewriter
