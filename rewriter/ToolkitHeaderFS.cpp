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

constexpr llvm::StringLiteral curandKernelHeader = "curand_mtgp32_kernel.h";

// Each match of pattern replaced by what replacement makes of its groups.
std::string
replaceMatches(llvm::StringRef text, const llvm::Regex &pattern,
               llvm::function_ref<std::string(llvm::ArrayRef<llvm::StringRef>)> replacement) {
  std::string out;
  llvm::StringRef rest = text;
  llvm::SmallVector<llvm::StringRef, 3> m;
  while (pattern.match(rest, &m)) {
    size_t at = m[0].data() - rest.data();
    out += rest.substr(0, at);
    out += replacement(m);
    rest = rest.substr(at + m[0].size());
  }
  out += rest;
  return out;
}

class ToolkitHeaderFS : public ChangedTextFS {
public:
  ToolkitHeaderFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base, std::string cudaInclude)
      : ChangedTextFS(std::move(base)), cudaInclude_(std::move(cudaInclude)) {}

protected:
  bool mayChange(llvm::StringRef path) override {
    return isClangCudaHeader(path) || llvm::sys::path::filename(path) == curandKernelHeader;
  }
  // Clang's header with its toolkit includes pinned (the wrapper without curand's); curand's
  // with clang's builtin types.
  std::string change(llvm::StringRef path, llvm::StringRef text) override {
    if (!isClangCudaHeader(path))
      return curandBuiltinVarsRetyped(text);
    std::string unforced = withoutCurandForceInclude(text);
    return pinToolkitIncludes(unforced, cudaInclude_, [&](llvm::StringRef name) {
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
  return replaceMatches(text, include, [&](llvm::ArrayRef<llvm::StringRef> m) {
    return inToolkit(m[2]) ? (m[1] + "\"" + cudaInclude + "/" + m[2] + "\"").str() : m[0].str();
  });
}

std::string withoutCurandForceInclude(llvm::StringRef wrapperText) {
  static const llvm::Regex include("^[ \t]*#[ \t]*include[ \t]*\"curand_mtgp32_kernel\\.h\"",
                                   llvm::Regex::Newline);
  return replaceMatches(wrapperText, include, [](auto) { return std::string(); });
}

std::string curandBuiltinVarsRetyped(llvm::StringRef headerText) {
  static const llvm::Regex blockDim("extern[ \t]+const[ \t]+dim3[ \t]+blockDim[ \t]*;");
  static const llvm::Regex threadIdx("extern[ \t]+const[ \t]+uint3[ \t]+threadIdx[ \t]*;");
  std::string out = replaceMatches(headerText, blockDim, [](auto) {
    return std::string("extern const __cuda_builtin_blockDim_t blockDim;");
  });
  return replaceMatches(out, threadIdx, [](auto) {
    return std::string("extern const __cuda_builtin_threadIdx_t threadIdx;");
  });
}

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
makeToolkitHeaderFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base, std::string cudaInclude) {
  return llvm::makeIntrusiveRefCnt<ToolkitHeaderFS>(std::move(base), std::move(cudaInclude));
}

} // namespace mgb::rewriter
