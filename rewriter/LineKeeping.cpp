#include "LineKeeping.h"

#include "llvm/Support/Regex.h"

#include <algorithm>
#include <vector>

namespace mgb::rewriter {

namespace {

unsigned lineNumberAt(llvm::StringRef text, size_t offset) {
  return 1 + static_cast<unsigned>(text.take_front(offset).count('\n'));
}

size_t lineStart(llvm::StringRef text, size_t offset) {
  size_t nl = text.take_front(offset).rfind('\n');
  return nl == llvm::StringRef::npos ? 0 : nl + 1;
}

bool continuesOnNextLine(llvm::StringRef text, size_t newline) {
  llvm::StringRef before = text.take_front(newline).rtrim('\r');
  return before.ends_with("\\");
}

// Where the preprocessor directive holding offset ends (after its newline), or npos when offset
// is not inside one. A directive's logical line may span physical lines ending in a backslash.
size_t directiveEnd(llvm::StringRef text, size_t offset) {
  size_t start = lineStart(text, offset);
  while (start > 0 && continuesOnNextLine(text, start - 1))
    start = lineStart(text, start - 1);
  llvm::StringRef head = text.substr(start).ltrim(" \t");
  if (!head.starts_with("#"))
    return llvm::StringRef::npos;
  size_t nl = text.find('\n', offset);
  while (nl != llvm::StringRef::npos && continuesOnNextLine(text, nl))
    nl = text.find('\n', nl + 1);
  return nl == llvm::StringRef::npos ? text.size() : nl + 1;
}

// Blanks that put the next character at the column offset has on its line (tabs kept).
std::string columnPadding(llvm::StringRef text, size_t offset) {
  std::string pad;
  for (char c : text.slice(lineStart(text, offset), offset))
    pad += c == '\t' ? '\t' : ' ';
  return pad;
}

// The original's own line directives (`#line N "f"`, GCC's `# N "f"`, as generated code has):
// from the line after one on, lines are numbered (and named) from it, and a #line of the rewrite
// must say the same.
class PresumedLines {
public:
  PresumedLines(llvm::StringRef text, LineName name) : text_(text), name_(std::move(name)) {
    static const llvm::Regex directive(
        "^[ \t]*#[ \t]*(line[ \t]+)?([0-9]+)([ \t]+\"(([^\"\\]|\\\\.)*)\")?");
    LineName current = name_;
    for (size_t start = 0; start < text.size();) {
      size_t nl = text.find('\n', start);
      size_t next = nl == llvm::StringRef::npos ? text.size() : nl + 1;
      llvm::SmallVector<llvm::StringRef> m;
      if (directive.match(text.slice(start, next), &m)) {
        if (!m[3].empty())
          current = unescape(m[4]);
        unsigned number = 0;
        m[2].getAsInteger(10, number);
        own_.push_back({next, number, current});
      }
      start = next;
    }
  }

  // The `#line` that gives the line holding offset its number and name in the original compile.
  std::string directiveAt(size_t offset) const {
    auto after = std::find_if(own_.rbegin(), own_.rend(),
                              [&](const Own &d) { return d.nextLine <= offset; });
    if (after == own_.rend())
      return lineDirective(lineNumberAt(text_, offset), name_);
    unsigned counted = lineNumberAt(text_, offset) - lineNumberAt(text_, after->nextLine);
    return lineDirective(after->number + counted, after->name);
  }

private:
  struct Own {
    size_t nextLine; // offset of the line after the directive
    unsigned number;
    LineName name;
  };
  static std::string unescape(llvm::StringRef quoted) {
    std::string out;
    for (size_t i = 0; i < quoted.size(); ++i)
      out += quoted[i] == '\\' && i + 1 < quoted.size() ? quoted[++i] : quoted[i];
    return out;
  }
  llvm::StringRef text_;
  LineName name_;
  std::vector<Own> own_;
};

} // namespace

std::string namedCopy(llvm::StringRef text, const LineName &name) {
  if (!name)
    return text.str();
  const size_t bom = afterByteOrderMark(text);
  return (text.take_front(bom) + lineDirective(1, name) + text.drop_front(bom)).str();
}

std::string lineDirective(unsigned line, const LineName &name) {
  std::string out = "#line " + std::to_string(line);
  if (name) {
    out += " \"";
    for (char c : *name) {
      if (c == '"' || c == '\\')
        out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "\n";
}

size_t afterByteOrderMark(llvm::StringRef text) { return text.starts_with("\xEF\xBB\xBF") ? 3 : 0; }

llvm::Expected<std::string> applyKeepingLines(llvm::StringRef original,
                                              const clang::tooling::Replacements &reps,
                                              const LineName &name) {
  PresumedLines presumed(original, name);
  std::string out;
  size_t pos = 0;
  size_t pendingAt = llvm::StringRef::npos; // a #line owed at this line start
  auto copyUpTo = [&](size_t limit) {
    if (pendingAt != llvm::StringRef::npos && pendingAt <= limit && pendingAt < original.size()) {
      out += original.slice(pos, pendingAt);
      out += presumed.directiveAt(pendingAt);
      pos = pendingAt;
      pendingAt = llvm::StringRef::npos;
    }
    out += original.slice(pos, limit);
    pos = std::max(pos, limit);
  };
  std::vector<clang::tooling::Replacement> ordered(reps.begin(), reps.end());
  for (size_t i = 0; i < ordered.size(); ++i) {
    const clang::tooling::Replacement &r = ordered[i];
    // Blanks after the edit may be dropped only up to the next edit.
    size_t next = i + 1 < ordered.size() ? ordered[i + 1].getOffset() : original.size();
    size_t begin = r.getOffset(), end = begin + r.getLength();
    if (end > original.size() || begin < pos)
      return llvm::createStringError(std::errc::invalid_argument,
                                     "replacement at %zu outside the text or overlapping", begin);
    copyUpTo(begin);
    llvm::StringRef text = r.getReplacementText();
    out += text;
    pos = end;
    if (text.count('\n') == original.slice(begin, end).count('\n'))
      continue;
    size_t directive = directiveEnd(original, end);
    if (directive != llvm::StringRef::npos) {
      pendingAt = directive;
      continue;
    }
    // The rest of the line goes under a #line naming its original number.
    while (!out.empty() && (out.back() == ' ' || out.back() == '\t'))
      out.pop_back();
    if (!out.empty() && out.back() != '\n')
      out += '\n';
    llvm::StringRef rest = original.substr(end);
    size_t restOfLine = rest.find('\n');
    if (rest.take_front(restOfLine).trim().empty() && restOfLine != llvm::StringRef::npos &&
        end + restOfLine + 1 <= next) {
      // Nothing else on the line: the next line starts under its own number.
      pos += restOfLine + 1;
      out += presumed.directiveAt(pos);
      continue;
    }
    out += presumed.directiveAt(end);
    out += columnPadding(original, end);
    size_t blanks = rest.find_first_not_of(" \t");
    pos = std::min(next, pos + (blanks == llvm::StringRef::npos ? rest.size() : blanks));
  }
  copyUpTo(original.size());
  return out;
}

} // namespace mgb::rewriter
