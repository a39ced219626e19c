// A file of a virtual file system whose text was changed as it was read (LaunchSpacingFS,
// ToolkitHeaderFS): the new text under the original's status and name.
#ifndef MGB_REWRITER_TEXTFILE_H
#define MGB_REWRITER_TEXTFILE_H

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <string>

namespace mgb::rewriter {

class TextFile : public llvm::vfs::File {
public:
  TextFile(llvm::vfs::Status status, std::string contents, std::string name)
      : status_(std::move(status)), contents_(std::move(contents)), name_(std::move(name)) {}
  llvm::ErrorOr<llvm::vfs::Status> status() override { return status_; }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> getBuffer(const llvm::Twine &, int64_t, bool,
                                                               bool) override {
    return llvm::MemoryBuffer::getMemBufferCopy(contents_, name_);
  }
  std::error_code close() override { return {}; }

private:
  llvm::vfs::Status status_;
  std::string contents_, name_;
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_TEXTFILE_H
