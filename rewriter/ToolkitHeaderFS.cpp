#include "ToolkitHeaderFS.h"

#include "TextFile.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

namespace mgb::rewriter {

namespace {

bool isClangCudaHeader(llvm::StringRef path) {
  return llvm::sys::path::filename(path).starts_with("__clang_cuda_");
}

class ToolkitHeaderFS : public ChangedTextFS {
public:
  ToolkitHeaderFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base, std::string cudaInclude)
      : ChangedTextFS(std::move(base)), cudaInclude_(std::move(cudaInclude)) {}

protected:
  bool mayChange(llvm::StringRef path) override { return isClangCudaHeader(path); }
  // The header's text with its toolkit includes pinned.
  std::string change(llvm::StringRef, llvm::StringRef text) override {
    return pinToolkitIncludes(text, cudaInclude_, [&](llvm::StringRef name) {
      llvm::SmallString<256> full(cudaInclude_);
      llvm::sys::path::append(full, name);
      auto s = getUnderlyingFS().status(full);
      return s && s->isRegularFile();
    });
  }

private:
  std::string cudaInclude_;
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
