// clang lexes `<<<` only when the three characters touch; real CUDA code also writes
// `kernel<< <g, b>> >(...)`, which nvcc accepts. This file system shows clang such launches
// with the spaces moved after the brackets (`<<< `): same length, so every offset stays valid
// for edits applied to the original text.
#ifndef MGB_REWRITER_LAUNCHSPACINGFS_H
#define MGB_REWRITER_LAUNCHSPACINGFS_H

#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <string>

namespace mgb::rewriter {

// `<<  <` -> `<<<  ` and the `>> >` that closes it -> `>>> `; other text unchanged.
std::string normalizeLaunchSpacing(llvm::StringRef code);

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
makeLaunchSpacingFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_LAUNCHSPACINGFS_H
