// Files of a virtual file system whose text is changed as they are read (LaunchSpacingFS,
// ToolkitHeaderFS): ChangedTextFS shows each file's new text, worked out once per path, under
// the original's name with the new size, so clang never takes it for a file changed on disk.
#ifndef MGB_REWRITER_TEXTFILE_H
#define MGB_REWRITER_TEXTFILE_H

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"

#include <map>
#include <mutex>
#include <optional>
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

class ChangedTextFS : public llvm::vfs::ProxyFileSystem {
public:
  using ProxyFileSystem::ProxyFileSystem;

  llvm::ErrorOr<llvm::vfs::Status> status(const llvm::Twine &path) override {
    auto status = ProxyFileSystem::status(path);
    if (!status || !status->isRegularFile() || !mayChange(path.str()))
      return status;
    const std::string *text = changed(path.str());
    return text ? llvm::vfs::Status::copyWithNewSize(*status, text->size()) : status;
  }

  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>>
  openFileForRead(const llvm::Twine &path) override {
    auto file = ProxyFileSystem::openFileForRead(path);
    if (!file || !mayChange(path.str()))
      return file;
    auto status = (*file)->status();
    const std::string *text = changed(path.str());
    if (!status || !text)
      return file;
    return std::unique_ptr<llvm::vfs::File>(
        new TextFile(llvm::vfs::Status::copyWithNewSize(*status, text->size()), *text, path.str()));
  }

protected:
  // Whether `path` may show other text than it holds (when not, it is not read here).
  virtual bool mayChange(llvm::StringRef /*path*/) { return true; }
  // The text `path` shows, given what it holds; the same text when nothing changes.
  virtual std::string change(llvm::StringRef path, llvm::StringRef text) = 0;

private:
  // The file's changed text; null when it shows what it holds.
  const std::string *changed(const std::string &path) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find(path);
    if (it == cache_.end()) {
      std::optional<std::string> text;
      if (auto buffer = getUnderlyingFS().getBufferForFile(path)) {
        llvm::StringRef original = (*buffer)->getBuffer();
        std::string shown = change(path, original);
        if (shown != original)
          text = std::move(shown);
      }
      it = cache_.emplace(path, std::move(text)).first;
    }
    return it->second ? &*it->second : nullptr;
  }

  std::mutex mutex_;
  std::map<std::string, std::optional<std::string>> cache_;
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_TEXTFILE_H
