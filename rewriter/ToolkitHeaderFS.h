// Clang's CUDA wrapper (__clang_cuda_runtime_wrapper.h, force-included into every CUDA parse)
// includes the toolkit's headers with quotes: `#include "cuda.h"`. A project header of the same
// name on the include path (darknet's src/cuda.h) is found first, and every .cu then fails with
// "cuda.h did not define CUDA_VERSION", although nvcc builds it. This file system shows clang its
// own CUDA headers (files named __clang_cuda_*.h) with each such include pinned to the toolkit's
// file, `#include "/usr/local/cuda/include/cuda.h"`, when the toolkit has it; every other file,
// and so the project's own `#include "cuda.h"`, is read as it is. Clang's headers are never
// edited by the rewrite, so their offsets may change.
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

// cudaInclude: the toolkit's include directory (<cuda-path>/include).
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
makeToolkitHeaderFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base, std::string cudaInclude);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_TOOLKITHEADERFS_H
