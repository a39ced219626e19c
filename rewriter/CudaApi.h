// The CUDA runtime functions mgb-rewrite knows: which have an mgb_ twin in mgb.h and what they do
// to device memory.
#ifndef MGB_REWRITER_CUDAAPI_H
#define MGB_REWRITER_CUDAAPI_H

#include "clang/AST/Decl.h"
#include "clang/AST/Expr.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mgb::rewriter {

enum class OpKind { Alloc, Free, Copy, Set, Other };

// The kind of a CUDA runtime function by name ("cudaMalloc"), or nullopt when it has no mgb_ twin.
std::optional<OpKind> cudaOpKind(llvm::StringRef name);

// The name a call of CUDA's `name` is renamed to: its mgb_ twin ("mgb_cudaMalloc"), or for a
// runtime function CUDA 12/13 removed (cudaThreadSynchronize) the twin or CUDA function that
// replaced it, so that old code compiles with today's nvcc and is still managed.
std::string replacementName(llvm::StringRef name);

// True when D is declared by the CUDA runtime headers (cuda_runtime_api.h / cuda_runtime.h): the C
// functions and the C++ template overloads alike. A user's own cudaMalloc is not CUDA's.
bool isCudaRuntimeDecl(const clang::Decl *D);

// The CUDA name behind a call's callee: "cudaMalloc" for CUDA's cudaMalloc and for an already
// rewritten mgb_cudaMalloc (so that rewritten code is still understood); empty otherwise.
llvm::StringRef cudaNameOfCallee(const clang::CallExpr *call, bool *alreadyRewritten = nullptr);

// The CUDA library whose system header declares D ("cuBLAS", "cuFFT", ..., "thrust", "cub"), or
// empty. Such libraries launch kernels and take device memory inside themselves.
llvm::StringRef cudaLibraryOf(const clang::Decl *D);

// The template FD was instantiated from (its declaration in the header), or FD itself: the
// headers' checks above look at where that is declared.
const clang::FunctionDecl *templatePattern(const clang::FunctionDecl *FD);

// The library of a host call's callee (cudaLibraryOf its template pattern), thrust excepted:
// thrust's containers and algorithms are reported on their own (ThrustUseReporter).
llvm::StringRef hostLibraryOf(const clang::FunctionDecl *FD);

// The library of a host call into code mgb cannot see that may take device memory: a function of
// a CUDA library ("cuBLAS", ..., "thrust", "cub"), or a CUDA runtime function without an mgb_
// twin that works on memory ("CUDA runtime": cudaMemcpy2DAsync, cudaMemPrefetchAsync,
// cudaPointerGetAttributes, make_cudaPitchedPtr...). Calls inside templates whose callee is not
// resolved yet count when every candidate is such a function. Empty otherwise.
llvm::StringRef foreignCallLibrary(const clang::CallExpr *call);

// A struct or union CUDA's own headers declare for the host (cudaDeviceProp, cudaResourceDesc...;
// not the vector types, which are device data).
bool isCudaHostStruct(const clang::RecordDecl *RD);

// mgb.h probe names whose presence in a function means it was rewritten already.
bool isMgbProbeName(llvm::StringRef name);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_CUDAAPI_H
