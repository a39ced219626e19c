// Launch syntax nvcc accepts and clang does not, shown to clang in a form it parses:
// - clang lexes `<<<` only when the three characters touch; real CUDA code also writes
//   `kernel<< <g, b>> >(...)`. The spaces move after the brackets (`<<< `): same length.
// - clang reads a launch configuration as plain expressions; real CUDA code also gives the grid
//   or block as a braced list, `<<<g, {x, y, 1}, 0, s>>>` (NVIDIA's multi-GPU Jacobi samples),
//   which nvcc takes as a dim3. The list is typed, `dim3{x, y, 1}`, which means the same to nvcc.
//   That inserts text, so the rewrite's edits apply to the source with the same insertions
//   (typeBracedLaunchConfigs): the rewritten file holds `dim3{...}` there, lines unchanged.
#ifndef MGB_REWRITER_LAUNCHSPACINGFS_H
#define MGB_REWRITER_LAUNCHSPACINGFS_H

#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <string>

namespace mgb::rewriter {

// `<<  <` -> `<<<  ` and the `>> >` that closes it -> `>>> `; other text unchanged.
std::string normalizeLaunchSpacing(llvm::StringRef code);

// `dim3` before a braced list given as a launch's grid or block; other text unchanged.
std::string typeBracedLaunchConfigs(llvm::StringRef code);

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
makeLaunchSpacingFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_LAUNCHSPACINGFS_H
