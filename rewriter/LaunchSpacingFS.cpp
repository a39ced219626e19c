#include "LaunchSpacingFS.h"

#include "TextFile.h"

#include "llvm/Support/MemoryBuffer.h"

namespace mgb::rewriter {

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// At `pos`, two `open` characters, whitespace, and a third: move the whitespace after them.
bool joinTriple(std::string &code, size_t pos, char open) {
  if (pos + 3 > code.size() || code[pos] != open || code[pos + 1] != open)
    return false;
  size_t end = pos + 2;
  while (end < code.size() && isSpace(code[end]))
    ++end;
  if (end == pos + 2 || end >= code.size() || code[end] != open)
    return false;
  std::string spaces = code.substr(pos + 2, end - pos - 2);
  code.replace(pos, end - pos + 1, std::string(3, open) + spaces);
  return true;
}

class LaunchSpacingFS : public llvm::vfs::ProxyFileSystem {
public:
  using ProxyFileSystem::ProxyFileSystem;
  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>>
  openFileForRead(const llvm::Twine &path) override {
    auto file = ProxyFileSystem::openFileForRead(path);
    if (!file)
      return file;
    auto status = (*file)->status();
    auto buffer = (*file)->getBuffer(path.str());
    if (!status || !buffer)
      return file;
    llvm::StringRef text = (*buffer)->getBuffer();
    if (text.find("<<") == llvm::StringRef::npos)
      return file;
    std::string normalized = normalizeLaunchSpacing(text);
    if (normalized == text)
      return file;
    return std::unique_ptr<llvm::vfs::File>(
        new TextFile(*status, std::move(normalized), path.str()));
  }
};

} // namespace

std::string normalizeLaunchSpacing(llvm::StringRef input) {
  std::string code = input.str();
  for (size_t pos = code.find("<<"); pos != std::string::npos; pos = code.find("<<", pos + 1)) {
    if ((pos > 0 && code[pos - 1] == '<') || !joinTriple(code, pos, '<'))
      continue;
    for (size_t close = code.find(">>", pos); close != std::string::npos;
         close = code.find(">>", close + 1))
      if (joinTriple(code, close, '>') || code.compare(close, 3, ">>>") == 0)
        break;
  }
  return code;
}

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
makeLaunchSpacingFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base) {
  return llvm::makeIntrusiveRefCnt<LaunchSpacingFS>(std::move(base));
}

} // namespace mgb::rewriter
