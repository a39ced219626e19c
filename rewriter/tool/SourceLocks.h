// SourceLocks: exclusive locks on the sources an --in-place rewrite reads and replaces, held
// from before they are parsed until their rewrite is written, so that two runs on one file never
// interleave (both once wrote edits computed for the original at offsets of the other's result).
#ifndef MGB_REWRITER_TOOL_SOURCELOCKS_H
#define MGB_REWRITER_TOOL_SOURCELOCKS_H

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mgb::rewriter {

class SourceLocks {
public:
  // Waits for each file's lock, in a fixed order (sorted paths: two runs cannot deadlock). The
  // lock is flock(2) on the file itself, re-taken when the path names another inode once it is
  // held (a run before this one replaced the file by a rename): no lock files are left behind.
  static llvm::Expected<SourceLocks> acquire(std::vector<std::string> paths);
  SourceLocks(SourceLocks &&other) noexcept : fds_(std::move(other.fds_)) { other.fds_.clear(); }
  SourceLocks &operator=(SourceLocks &&) = delete;
  ~SourceLocks();

private:
  SourceLocks() = default;
  std::vector<int> fds_;
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_TOOL_SOURCELOCKS_H
