#include "CudaApi.h"

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Path.h"

namespace mgb::rewriter {
namespace {

const llvm::StringMap<OpKind> &twins() {
  static const llvm::StringMap<OpKind> table = {
      {"cudaMalloc", OpKind::Alloc},
      {"cudaMallocPitch", OpKind::Alloc},
      {"cudaMallocManaged", OpKind::Alloc},
      {"cudaFree", OpKind::Free},
      {"cudaMemcpy", OpKind::Copy},
      {"cudaMemcpyAsync", OpKind::Copy},
      {"cudaMemcpy2D", OpKind::Copy},
      {"cudaMemcpyToSymbol", OpKind::Copy},
      {"cudaMemcpyFromSymbol", OpKind::Copy},
      // By the addresses, not the program's device numbers: mgbd chose where the memory lives.
      {"cudaMemcpyPeer", OpKind::Other},
      {"cudaMemcpyPeerAsync", OpKind::Other},
      {"cudaMemset", OpKind::Set},
      {"cudaMemsetAsync", OpKind::Set},
      {"cudaStreamCreate", OpKind::Other},
      {"cudaStreamCreateWithFlags", OpKind::Other},
      {"cudaStreamDestroy", OpKind::Other},
      {"cudaStreamSynchronize", OpKind::Other},
      {"cudaStreamQuery", OpKind::Other},
      {"cudaStreamWaitEvent", OpKind::Other},
      {"cudaEventCreate", OpKind::Other},
      {"cudaEventCreateWithFlags", OpKind::Other},
      {"cudaEventQuery", OpKind::Other},
      {"cudaEventRecord", OpKind::Other},
      {"cudaEventSynchronize", OpKind::Other},
      {"cudaEventElapsedTime", OpKind::Other},
      {"cudaEventDestroy", OpKind::Other},
      {"cudaDeviceSetLimit", OpKind::Other},
      {"cudaSetDevice", OpKind::Other},
      // The CUDA state the program sees: libmgb's own calls never show in it (docs/runtime.md).
      {"cudaGetDevice", OpKind::Other},
      {"cudaGetLastError", OpKind::Other},
      {"cudaPeekAtLastError", OpKind::Other},
      {"cudaDeviceSynchronize", OpKind::Other},
      {"cudaDeviceEnablePeerAccess", OpKind::Other}, // from the program's device, not libmgb's
      {"cudaDeviceDisablePeerAccess", OpKind::Other},
      {"cudaLaunchKernel", OpKind::Other},
      {"cudaLaunchCooperativeKernel", OpKind::Other}, // grid-wide synchronisation
      {"cudaLaunchKernelEx", OpKind::Other},          // clusters and other launch attributes
      {"cudaLaunchKernelExC", OpKind::Other},
      {"cudaStreamBeginCapture", OpKind::Other},
      {"cudaStreamEndCapture", OpKind::Other},
      {"cudaGraphInstantiate", OpKind::Other},
      {"cudaGraphInstantiateWithFlags", OpKind::Other},
      {"cudaGraphLaunch", OpKind::Other},
      // Removed by CUDA 12/13 (declared for parsing by shim/mgb_removed_cuda_api.h).
      {"cudaThreadSynchronize", OpKind::Other},
      {"cudaThreadExit", OpKind::Other},
      {"cudaThreadSetLimit", OpKind::Other},
      {"cudaThreadGetLimit", OpKind::Other},
      {"cudaThreadSetCacheConfig", OpKind::Other},
      {"cudaThreadGetCacheConfig", OpKind::Other},
  };
  return table;
}

// Removed runtime functions and what replaces them (same parameters).
const llvm::StringMap<std::string> &removedReplacements() {
  static const llvm::StringMap<std::string> table = {
      {"cudaThreadSynchronize", "mgb_cudaDeviceSynchronize"},
      {"cudaThreadExit", "cudaDeviceReset"},
      {"cudaThreadSetLimit", "mgb_cudaDeviceSetLimit"},
      {"cudaThreadGetLimit", "cudaDeviceGetLimit"},
      {"cudaThreadSetCacheConfig", "cudaDeviceSetCacheConfig"},
      {"cudaThreadGetCacheConfig", "cudaDeviceGetCacheConfig"},
  };
  return table;
}

} // namespace

std::optional<OpKind> cudaOpKind(llvm::StringRef name) {
  auto it = twins().find(name);
  if (it == twins().end())
    return std::nullopt;
  return it->second;
}

std::string replacementName(llvm::StringRef name) {
  auto it = removedReplacements().find(name);
  return it != removedReplacements().end() ? it->second : ("mgb_" + name).str();
}

bool isCudaRuntimeDecl(const clang::Decl *D) {
  if (!D)
    return false;
  const clang::SourceManager &SM = D->getASTContext().getSourceManager();
  clang::SourceLocation loc = SM.getExpansionLoc(D->getLocation());
  if (!SM.isInSystemHeader(loc))
    return false;
  llvm::StringRef file = llvm::sys::path::filename(SM.getFilename(loc));
  return file == "cuda_runtime_api.h" || file == "cuda_runtime.h" ||
         file == "mgb_removed_cuda_api.h";
}

llvm::StringRef cudaNameOfCallee(const clang::CallExpr *call, bool *alreadyRewritten) {
  if (alreadyRewritten)
    *alreadyRewritten = false;
  const clang::Expr *callee = call->getCallee()->IgnoreParenImpCasts();
  // Inside templates a call with dependent arguments names an unresolved overload set.
  if (const auto *U = llvm::dyn_cast<clang::UnresolvedLookupExpr>(callee)) {
    if (!U->getName().isIdentifier())
      return {};
    llvm::StringRef name = U->getName().getAsIdentifierInfo()->getName();
    if (name.consume_front("mgb_")) {
      if (alreadyRewritten)
        *alreadyRewritten = true;
      return cudaOpKind(name) ? name : llvm::StringRef();
    }
    for (const clang::NamedDecl *D : U->decls())
      if (isCudaRuntimeDecl(D->getUnderlyingDecl()) && cudaOpKind(name))
        return name;
    return {};
  }
  const clang::FunctionDecl *FD = call->getDirectCallee();
  if (!FD || !FD->getIdentifier())
    return {};
  llvm::StringRef name = FD->getName();
  if (name.consume_front("mgb_")) {
    if (alreadyRewritten)
      *alreadyRewritten = true;
    return cudaOpKind(name) ? name : llvm::StringRef();
  }
  if (!cudaOpKind(name))
    return {};
  return isCudaRuntimeDecl(templatePattern(FD)) ? name : llvm::StringRef();
}

const clang::FunctionDecl *templatePattern(const clang::FunctionDecl *FD) {
  return FD->getPrimaryTemplate() ? FD->getPrimaryTemplate()->getTemplatedDecl() : FD;
}

llvm::StringRef hostLibraryOf(const clang::FunctionDecl *FD) {
  llvm::StringRef library = cudaLibraryOf(templatePattern(FD));
  return library == "thrust" ? llvm::StringRef() : library;
}

llvm::StringRef cudaLibraryOf(const clang::Decl *D) {
  if (!D)
    return {};
  const clang::SourceManager &SM = D->getASTContext().getSourceManager();
  clang::SourceLocation loc = SM.getExpansionLoc(D->getLocation());
  if (!SM.isInSystemHeader(loc))
    return {};
  llvm::StringRef path = SM.getFilename(loc);
  llvm::StringRef file = llvm::sys::path::filename(path);
  static const std::pair<const char *, const char *> libraries[] = {
      {"cublas", "cuBLAS"},     {"cufft", "cuFFT"},       {"curand", "cuRAND"},
      {"cusparse", "cuSPARSE"}, {"cusolver", "cuSOLVER"}, {"cudnn", "cuDNN"},
      {"nccl", "NCCL"},         {"nvjpeg", "nvJPEG"},     {"npp", "NPP"}};
  for (const auto &[prefix, name] : libraries)
    if (file.starts_with(prefix))
      return name;
  if (path.contains("/thrust/"))
    return "thrust";
  if (path.contains("/cub/"))
    return "cub";
  return {};
}

namespace {

// A CUDA runtime function without an mgb_ twin that takes or describes device memory.
bool isUntwinnedMemoryFunction(const clang::FunctionDecl *FD) {
  if (!FD->getIdentifier())
    return false;
  llvm::StringRef name = FD->getName();
  if (cudaOpKind(name) || name.starts_with("mgb_"))
    return false;
  const clang::SourceManager &SM = FD->getASTContext().getSourceManager();
  clang::SourceLocation loc = SM.getExpansionLoc(FD->getLocation());
  if (name == "make_cudaPitchedPtr")
    return SM.isInSystemHeader(loc) &&
           llvm::sys::path::filename(SM.getFilename(loc)) == "driver_functions.h";
  if (!isCudaRuntimeDecl(FD))
    return false;
  return name.starts_with("cudaMem") || name == "cudaPointerGetAttributes" ||
         name == "cudaIpcGetMemHandle" || name.starts_with("cudaGraphAddMem") ||
         name.starts_with("cudaGraphMemcpyNode") || name.starts_with("cudaGraphMemsetNode") ||
         name == "cudaStreamAttachMemAsync";
}

llvm::StringRef foreignLibraryOf(const clang::FunctionDecl *FD) {
  if (!FD || (FD->hasAttr<clang::CUDADeviceAttr>() && !FD->hasAttr<clang::CUDAHostAttr>()) ||
      FD->hasAttr<clang::CUDAGlobalAttr>())
    return {};
  const clang::FunctionDecl *pattern = templatePattern(FD);
  if (llvm::StringRef library = cudaLibraryOf(pattern); !library.empty())
    return library;
  return isUntwinnedMemoryFunction(pattern) ? "CUDA runtime" : llvm::StringRef();
}

} // namespace

llvm::StringRef foreignCallLibrary(const clang::CallExpr *call) {
  if (llvm::isa<clang::CUDAKernelCallExpr>(call))
    return {};
  if (const clang::FunctionDecl *FD = call->getDirectCallee())
    return foreignLibraryOf(FD);
  const auto *U =
      llvm::dyn_cast<clang::UnresolvedLookupExpr>(call->getCallee()->IgnoreParenImpCasts());
  if (!U)
    return {};
  llvm::StringRef library;
  for (const clang::NamedDecl *D : U->decls()) {
    const clang::NamedDecl *under = D->getUnderlyingDecl();
    const clang::FunctionDecl *FD = llvm::dyn_cast<clang::FunctionDecl>(under);
    if (const auto *FT = llvm::dyn_cast<clang::FunctionTemplateDecl>(under))
      FD = FT->getTemplatedDecl();
    llvm::StringRef candidate = foreignLibraryOf(FD);
    if (candidate.empty())
      return {};
    library = candidate;
  }
  return library;
}

bool isCudaHostStruct(const clang::RecordDecl *RD) {
  if (!RD)
    return false;
  const clang::SourceManager &SM = RD->getASTContext().getSourceManager();
  clang::SourceLocation loc = SM.getExpansionLoc(RD->getLocation());
  if (!SM.isInSystemHeader(loc))
    return false;
  // By file name: the toolkit's include directory is reached under several paths
  // (/usr/local/cuda/include, /usr/local/include, targets/...).
  llvm::StringRef file = llvm::sys::path::filename(SM.getFilename(loc));
  // Not vector_types.h: float4, double2 (cuDoubleComplex) are the device data of kernels and
  // libraries (cuFFT's cufftDoubleComplex buffers: HeCBench slit).
  return file == "driver_types.h" || file == "texture_types.h" || file == "surface_types.h" ||
         file == "library_types.h" || file == "cuda_runtime_api.h" || file == "cuda_runtime.h" ||
         file == "driver_functions.h" || file == "cuda.h";
}

bool isMgbProbeName(llvm::StringRef name) {
  return name == "mgb_task_begin" || name == "mgb_task_end" || name == "mgb_prepare" ||
         name == "mgb_launch_prepare" || name == "mgb_prepare_pointers";
}

} // namespace mgb::rewriter
