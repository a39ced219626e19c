#include "LaunchSpacingFS.h"

#include "TextFile.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cctype>
#include <vector>

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

// `operator<< <2>(os, x)`: a shift operator's template arguments, not a launch (the friend
// declaration idiom of cuda-api-wrappers and many C++ libraries).
bool afterOperatorKeyword(const std::string &code, size_t pos) {
  size_t end = pos;
  while (end > 0 && isSpace(code[end - 1]))
    --end;
  static const std::string keyword = "operator";
  if (end < keyword.size() || code.compare(end - keyword.size(), keyword.size(), keyword) != 0)
    return false;
  size_t start = end - keyword.size();
  return start == 0 ||
         !(std::isalnum(static_cast<unsigned char>(code[start - 1])) || code[start - 1] == '_');
}

} // namespace

std::string normalizeLaunchSpacing(llvm::StringRef input) {
  std::string code = input.str();
  for (size_t pos = code.find("<<"); pos != std::string::npos; pos = code.find("<<", pos + 1)) {
    if ((pos > 0 && code[pos - 1] == '<') || afterOperatorKeyword(code, pos) ||
        !joinTriple(code, pos, '<'))
      continue;
    for (size_t close = code.find(">>", pos); close != std::string::npos;
         close = code.find(">>", close + 1))
      if (joinTriple(code, close, '>') || code.compare(close, 3, ">>>") == 0)
        break;
  }
  return code;
}

namespace {

// Offsets of `code` that are program text: not inside a comment, a string or a character
// literal (a log line "k<<<{%d,%d}, %d>>>" in CUB must stay as written).
std::vector<bool> programText(const std::string &code) {
  std::vector<bool> text(code.size(), true);
  size_t i = 0;
  auto mark = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < code.size(); ++k)
      text[k] = false;
  };
  while (i < code.size()) {
    if (code.compare(i, 2, "//") == 0) {
      size_t end = code.find('\n', i);
      end = end == std::string::npos ? code.size() : end;
      mark(i, end);
      i = end;
    } else if (code.compare(i, 2, "/*") == 0) {
      size_t end = code.find("*/", i + 2);
      end = end == std::string::npos ? code.size() : end + 2;
      mark(i, end);
      i = end;
    } else if (code[i] == '"' || code[i] == '\'') {
      const char quote = code[i];
      size_t end = i + 1;
      while (end < code.size() && code[end] != quote && code[end] != '\n')
        end += code[end] == '\\' ? 2 : 1;
      end = std::min(end + 1, code.size());
      mark(i, end);
      i = end;
    } else {
      ++i;
    }
  }
  return text;
}

// Where `dim3` goes in `spaced` (launch brackets already joined): before a `{` that opens the
// first or second argument of a `<<<...>>>` (the grid and the block; the shared-memory size and
// the stream are not dim3s).
std::vector<size_t> bracedConfigPositions(const std::string &spaced) {
  std::vector<size_t> positions;
  if (spaced.find('{') == std::string::npos)
    return positions;
  const std::vector<bool> text = programText(spaced);
  for (size_t pos = spaced.find("<<<"); pos != std::string::npos;
       pos = spaced.find("<<<", pos + 3)) {
    if (!text[pos])
      continue;
    int depth = 0;
    int argument = 0;
    bool atStart = true; // only whitespace since `<<<` or the last top-level comma
    for (size_t i = pos + 3; i < spaced.size(); ++i) {
      if (!text[i])
        continue;
      char c = spaced[i];
      if (depth == 0 && spaced.compare(i, 3, ">>>") == 0)
        break;
      if (atStart && isSpace(c))
        continue;
      if (atStart && c == '{' && depth == 0 && argument < 2)
        positions.push_back(i);
      atStart = false;
      if (c == '(' || c == '[' || c == '{')
        ++depth;
      else if (c == ')' || c == ']' || c == '}')
        --depth;
      else if (c == ',' && depth == 0) {
        ++argument;
        atStart = true;
      } else if (c == ';')
        break; // not a launch configuration after all
      if (depth < 0)
        break;
    }
  }
  return positions;
}

std::string insertDim3(llvm::StringRef code, const std::vector<size_t> &positions) {
  std::string out = code.str();
  for (auto it = positions.rbegin(); it != positions.rend(); ++it)
    out.insert(*it, "dim3");
  return out;
}

class LaunchSpacingFS : public ChangedTextFS {
public:
  using ChangedTextFS::ChangedTextFS;

protected:
  std::string change(llvm::StringRef, llvm::StringRef text) override {
    if (text.find("<<") == llvm::StringRef::npos)
      return text.str();
    std::string spaced = normalizeLaunchSpacing(text);
    return insertDim3(spaced, bracedConfigPositions(spaced));
  }
};

} // namespace

std::string typeBracedLaunchConfigs(llvm::StringRef input) {
  if (input.find("<<") == llvm::StringRef::npos)
    return input.str();
  // Joining spaced brackets keeps every offset, so positions found there hold in the input.
  return insertDim3(input, bracedConfigPositions(normalizeLaunchSpacing(input)));
}

llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem>
makeLaunchSpacingFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> base) {
  return llvm::makeIntrusiveRefCnt<LaunchSpacingFS>(std::move(base));
}

} // namespace mgb::rewriter
