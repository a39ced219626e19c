#include "FileChanges.h"

#include "clang/Tooling/ReplacementsYaml.h"
#include "llvm/Support/YAMLTraits.h"

#include <sstream>

namespace mgb::rewriter {

namespace {

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

} // namespace

void printUnifiedDiff(const FileResult &r, llvm::raw_ostream &out) {
  std::vector<std::string> a = lines(r.original), b = lines(r.rewritten);
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix])
    ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
    ++suffix;
  size_t start = prefix > 3 ? prefix - 3 : 0;
  size_t endA = std::min(a.size(), a.size() - suffix + 3),
         endB = std::min(b.size(), b.size() - suffix + 3);
  out << "--- " << r.path << "\n+++ " << r.path << " (mgb-rewrite)\n";
  out << "@@ -" << start + 1 << "," << endA - start << " +" << start + 1 << "," << endB - start
      << " @@\n";
  for (size_t i = start; i < prefix; ++i)
    out << " " << a[i] << "\n";
  for (size_t i = prefix; i < a.size() - suffix; ++i)
    out << "-" << a[i] << "\n";
  for (size_t i = prefix; i < b.size() - suffix; ++i)
    out << "+" << b[i] << "\n";
  for (size_t i = b.size() - suffix; i < endB; ++i)
    out << " " << b[i] << "\n";
}

clang::tooling::Replacement replacementFor(const FileResult &r) {
  llvm::StringRef a = r.original, b = r.rewritten;
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix])
    ++prefix;
  // Back to the start of the first changed line (the same in both: it is common text).
  size_t lineStart = a.substr(0, prefix).rfind('\n');
  prefix = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
    ++suffix;
  // Forward to the start of a line: the common tail is whole lines.
  while (suffix > 0 && a[a.size() - suffix - 1] != '\n')
    --suffix;
  return clang::tooling::Replacement(r.path, prefix, a.size() - suffix - prefix,
                                     b.substr(prefix, b.size() - suffix - prefix));
}

std::string fixesYaml(const std::vector<FileResult> &results, const std::string &mainSource) {
  clang::tooling::TranslationUnitReplacements fixes;
  fixes.MainSourceFile = mainSource;
  for (const FileResult &r : results)
    if (r.rewritten != r.original)
      fixes.Replacements.push_back(replacementFor(r));
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::yaml::Output yaml(os);
  yaml << fixes;
  return text;
}

} // namespace mgb::rewriter
