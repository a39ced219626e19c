#include "ToolkitHeaderFS.h"

#include "TextFile.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include <map>
#include <mutex>
#include <optional>

namespace mgb::rewriter {

namespace {

bool isClangCudaHeader(llvm::StringRef path) {
  return llvm::sys::path::filename(path).starts_with("__clang_cuda_");
}

class ToolkitHeaderFS : public llvm::vfs::ProxyFileSystem {
public:
  ToolkitHeaderFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base, std::string cudaInclude)
      : ProxyFileSystem(std::move(base)), cudaInclude_(std::move(cudaInclude)) {}

  llvm::ErrorOr<llvm::vfs::Status> status(const llvm::Twine &path) override {
    auto status = ProxyFileSystem::status(path);
    if (!status || !status->isRegularFile() || !isClangCudaHeader(path.str()))
      return status;
    const std::string *text = pinned(path.str());
    return text ? llvm::vfs::Status::copyWithNewSize(*status, text->size()) : status;
  }

  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>>
  openFileForRead(const llvm::Twine &path) override {
    auto file = ProxyFileSystem::openFileForRead(path);
    if (!file || !isClangCudaHeader(path.str()))
      return file;
    auto status = (*file)->status();
    const std::string *text = pinned(path.str());
    if (!status || !text)
      return file;
    return std::unique_ptr<llvm::vfs::File>(
        new TextFile(llvm::vfs::Status::copyWithNewSize(*status, text->size()), *text, path.str()));
  }

private:
  // The header's text with its toolkit includes pinned; null when it has none (read as is).
  const std::string *pinned(const std::string &path) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find(path);
    if (it == cache_.end()) {
      std::optional<std::string> text;
      if (auto buffer = getUnderlyingFS().getBufferForFile(path)) {
        llvm::StringRef original = (*buffer)->getBuffer();
        std::string changed = pinToolkitIncludes(original, cudaInclude_, [&](llvm::StringRef name) {
          llvm::SmallString<256> full(cudaInclude_);
          llvm::sys::path::append(full, name);
          auto s = getUnderlyingFS().status(full);
          return s && s->isRegularFile();
        });
        if (changed != original)
          text = std::move(changed);
      }
      it = cache_.emplace(path, std::move(text)).first;
    }
    return it->second ? &*it->second : nullptr;
  }

  std::string cudaInclude_;
  std::mutex mutex_;
  std::map<std::string, std::optional<std::string>> cache_;
};

} // namespace

std::string pinToolkitIncludes(llvm::StringRef text, llvm::StringRef cudaInclude,
                               llvm::function_ref<bool(llvm::StringRef)> inToolkit) {
  static const llvm::Regex include("^([ \t]*#[ \t]*include[ \t]*)\"([^\"/][^\"]*)\"",
                                   llvm::Regex::Newline);
  std::string out;
  llvm::StringRef rest = text;
  llvm::SmallVector<llvm::StringRef, 3> m;
  while (include.match(rest, &m)) {
    size_t at = m[0].data() - rest.data();
    out += rest.substr(0, at);
    if (inToolkit(m[2]))
      out += (m[1] + "\"" + cudaInclude + "/" + m[2] + "\"").str();
    else
      out += m[0];
    rest = rest.substr(at + m[0].size());
  }
  out += rest;
  return out;
}

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
makeToolkitHeaderFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base, std::string cudaInclude) {
  return llvm::makeIntrusiveRefCnt<ToolkitHeaderFS>(std::move(base), std::move(cudaInclude));
}

} // namespace mgb::rewriter
