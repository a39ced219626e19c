// The edits of one run, per file: deduplicated (a header included by several translation units
// gets the same edits from each) and kept in the order they were made at equal offsets.
#ifndef MGB_REWRITER_EDITSET_H
#define MGB_REWRITER_EDITSET_H

#include "clang/Basic/SourceManager.h"
#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace mgb::rewriter {

class EditSet {
public:
  // root: only files under this directory (and not system headers) are edited.
  explicit EditSet(std::string root) : root_(std::move(root)) {}

  bool isEditable(clang::SourceLocation loc, const clang::SourceManager &SM) const;

  // Both return false (and do nothing) when the location is not in an editable file.
  bool insert(clang::SourceLocation loc, llvm::StringRef text, const clang::SourceManager &SM);
  bool replace(clang::CharSourceRange range, llvm::StringRef text, const clang::SourceManager &SM);
  // A range that is moved elsewhere as a copy (a launch argument hoisted into a variable) takes
  // the edits made inside it along: textWithEdits is the range's text with those edits applied
  // (insertions at its very ends are not inside), and replaceMoving replaces the range and drops
  // them, so that they are neither lost nor overlapping. Without edits inside, the two are
  // Lexer::getSourceText and replace.
  std::string textWithEdits(clang::CharSourceRange range, const clang::SourceManager &SM,
                            const clang::LangOptions &LO) const;
  bool replaceMoving(clang::CharSourceRange range, llvm::StringRef text,
                     const clang::SourceManager &SM);

  // Edits inside a macro's definition made for one of its expansions (a launch spelled in the
  // macro's body, found at `definition`). The definition is one text for every expansion, so
  // every expansion must make the same edits there: the first expansion's edits stand while
  // later ones agree; one that disagrees (another kernel's argument types, __VA_ARGS__ standing
  // for another number of arguments), or that cannot be edited (rejectMacroEdits), retracts them
  // all for good, and every translation unit that made them is noted as holding unseen code.
  // applyMacroEdits returns false when nothing of the definition stays edited.
  struct MacroEdit {
    clang::CharSourceRange range;
    std::string text;
  };
  bool applyMacroEdits(clang::SourceLocation definition, const std::vector<MacroEdit> &edits,
                       const clang::SourceManager &SM);
  void rejectMacroEdits(clang::SourceLocation definition, const clang::SourceManager &SM);

  // Files with at least one edit, and the edits as clang Replacements.
  std::vector<std::string> files() const;
  llvm::Expected<clang::tooling::Replacements> replacementsFor(const std::string &file) const;
  bool hasEdits(const std::string &file) const { return edits_.count(file) != 0; }

  // Per-file flags shared by the callbacks of one file (include added, macro fallbacks).
  std::set<std::string> &macroFallbacks(const std::string &file) { return fallbacks_[file]; }
  const std::map<std::string, std::set<std::string>> &allMacroFallbacks() const {
    return fallbacks_;
  }
  // The translation unit being parsed holds code mgb cannot see or route (a launch in a header
  // outside --root, one spelled across macros, a cooperative launch in C): its main file gets
  // mgb/unseen_tu.h, which makes
  // libmgb bind memory eagerly, so that no stand-in reaches that code.
  void noteUnseenCode(const clang::SourceManager &SM);
  bool holdsUnseenCode(const std::string &file) const { return unseen_.count(file) != 0; }
  // ... because a system header it includes (thrust, CUB) allocates device memory itself: those
  // calls are routed to libmgb by `#define`, so the memory is counted in the process's task.
  void noteLibraryMemory(const clang::SourceManager &SM);
  bool holdsLibraryMemory(const std::string &file) const { return library_.count(file) != 0; }
  // The canonical path of the translation unit's main file when it may be rewritten.
  std::optional<std::string> editableMainFile(const clang::SourceManager &SM) const;
  const std::set<std::string> &filesWithUnseenCode() const { return unseen_; }
  int nextTaskNumber(const std::string &file) { return ++taskCounters_[file]; }
  void resetTaskNumbers() { taskCounters_.clear(); }

  static std::string canonicalPath(llvm::StringRef path);

  // The name the parse knew an editable file by (the lookup path its #include resolved to, or the
  // main file as given): what the compiler's __FILE__ spells for it. Empty when never seen.
  std::string spelling(const std::string &file) const;

private:
  struct Edit {
    unsigned offset, length;
    std::string text;
    bool operator<(const Edit &o) const {
      return std::tie(offset, length, text) < std::tie(o.offset, o.length, o.text);
    }
  };
  struct MacroGroup {
    std::string signature;                          // the edits, as text
    std::vector<std::pair<std::string, Edit>> made; // file, edit
    std::set<std::string> units;                    // main files that made them
    bool rejected = false;
  };
  std::optional<Edit> editOf(clang::CharSourceRange range, llvm::StringRef text,
                             const clang::SourceManager &SM, std::string &file) const;
  // By offset, and at one offset in the order they apply (edit, the sequence it was made in).
  static void sortAsApplied(std::vector<std::pair<Edit, unsigned>> &edits);
  // The edits of `file` strictly inside [offset, offset + length), in the order they apply.
  std::vector<Edit> editsInside(const std::string &file, unsigned offset, unsigned length) const;
  std::string macroKey(clang::SourceLocation definition, const clang::SourceManager &SM) const;
  // The group of a definition, with the translation unit being parsed among its units.
  MacroGroup &groupFor(clang::SourceLocation definition, const clang::SourceManager &SM);
  void retract(MacroGroup &group);

  std::string root_;
  unsigned sequence_ = 0;
  std::map<std::string, MacroGroup> macroGroups_;         // by the definition's file:offset
  std::map<std::string, std::map<Edit, unsigned>> edits_; // edit -> first time it was made
  std::map<std::string, std::set<std::string>> fallbacks_;
  std::map<std::string, int> taskCounters_;
  std::set<std::string> unseen_;
  std::set<std::string> library_;
  mutable std::map<std::string, std::string> spellings_; // canonical path -> first name seen
};

} // namespace mgb::rewriter

#endif // MGB_REWRITER_EDITSET_H
