// Clang's CUDA wrapper (__clang_cuda_runtime_wrapper.h, force-included into every CUDA parse)
// includes the toolkit's headers with quotes: `#include "cuda.h"`. A project header of the same
// name on the include path (darknet's src/cuda.h) is found first, and every .cu then fails with
// "cuda.h did not define CUDA_VERSION", although nvcc builds it. This file system shows clang its
// own CUDA headers (files named __clang_cuda_*.h) with each such include pinned to the toolkit's
// file, `#include "/usr/local/cuda/include/cuda.h"`, when the toolkit has it; every other file,
// and so the project's own `#include "cuda.h"`, is read as it is. Clang's headers are never
// edited by the rewrite, so their offsets may change.
//
// The wrapper also force-includes the toolkit's curand_mtgp32_kernel.h, which nvcc never includes
// unasked: the program's -D macros then meet that header's identifiers (`-DV=4` against its
// parameter V) and the parse fails where nvcc compiles. Here the wrapper does not include it, and
// the header, when the program includes it, declares blockDim and threadIdx with clang's builtin
// types, which is what the wrapper's force-include existed for (the wrapper's comment says why).
#ifndef MGB_REWRITER_TOOLKITHEADERFS_H
#define MGB_REWRITER_TOOLKITHEADERFS_H

#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <string>

namespace mgb::rewriter {

// `#include "NAME"` -> `#include "<cudaInclude>/NAME"` for each NAME with inToolkit(NAME).
std::string pinToolkitIncludes(llvm::StringRef text, llvm::StringRef cudaInclude,
                               llvm::function_ref<bool(llvm::StringRef)> inToolkit);

// Clang's CUDA wrapper without its `#include "curand_mtgp32_kernel.h"` (the line kept, empty).
std::string withoutCurandForceInclude(llvm::StringRef wrapperText);
// curand_mtgp32_kernel.h's host declarations of blockDim and threadIdx (dim3, uint3) with clang's
// builtin variable types instead.
std::string curandBuiltinVarsRetyped(llvm::StringRef headerText);

// cudaInclude: the toolkit's include directory (<cuda-path>/include).
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
makeToolkitHeaderFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base, std::string cudaInclude);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_TOOLKITHEADERFS_H
