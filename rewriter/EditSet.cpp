#include "EditSet.h"

#include "clang/Lex/Lexer.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>

namespace mgb::rewriter {

using namespace clang;

std::string EditSet::canonicalPath(llvm::StringRef path) {
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(path, real))
    return std::string(real);
  llvm::SmallString<256> abs(path);
  llvm::sys::fs::make_absolute(abs);
  llvm::sys::path::remove_dots(abs, true);
  return std::string(abs);
}

bool EditSet::isEditable(SourceLocation loc, const SourceManager &SM) const {
  if (loc.isInvalid() || loc.isMacroID() || SM.isInSystemHeader(loc))
    return false;
  OptionalFileEntryRef entry = SM.getFileEntryRefForID(SM.getFileID(loc));
  if (!entry)
    return false;
  std::string path = canonicalPath(entry->getName());
  if (!llvm::StringRef(path).starts_with(root_ + "/") && path != root_)
    return false;
  spellings_.emplace(path, entry->getName().str());
  return true;
}

std::string EditSet::spelling(const std::string &file) const {
  auto it = spellings_.find(file);
  return it == spellings_.end() ? std::string() : it->second;
}

bool EditSet::insert(SourceLocation loc, llvm::StringRef text, const SourceManager &SM) {
  return replace(CharSourceRange::getCharRange(loc, loc), text, SM);
}

std::optional<EditSet::Edit> EditSet::editOf(CharSourceRange range, llvm::StringRef text,
                                             const SourceManager &SM, std::string &file) const {
  SourceLocation b = range.getBegin(), e = range.getEnd();
  if (!isEditable(b, SM) || !isEditable(e, SM) || SM.getFileID(b) != SM.getFileID(e))
    return std::nullopt;
  file = canonicalPath(SM.getFileEntryRefForID(SM.getFileID(b))->getName());
  return Edit{SM.getFileOffset(b), SM.getFileOffset(e) - SM.getFileOffset(b), text.str()};
}

bool EditSet::replace(CharSourceRange range, llvm::StringRef text, const SourceManager &SM) {
  std::string file;
  std::optional<Edit> edit = editOf(range, text, SM, file);
  if (!edit)
    return false;
  edits_[file].emplace(std::move(*edit), sequence_++);
  return true;
}

void EditSet::sortAsApplied(std::vector<std::pair<Edit, unsigned>> &edits) {
  // Equal offsets: insertions first, in the order they were made (an opening brace before the
  // probe it encloses), then the replacement.
  std::stable_sort(edits.begin(), edits.end(), [](const auto &a, const auto &b) {
    return std::tuple(a.first.offset, a.first.length, a.second) <
           std::tuple(b.first.offset, b.first.length, b.second);
  });
}

std::vector<EditSet::Edit> EditSet::editsInside(const std::string &file, unsigned offset,
                                                unsigned length) const {
  std::vector<std::pair<Edit, unsigned>> inside;
  if (auto it = edits_.find(file); it != edits_.end())
    for (const auto &[edit, made] : it->second) {
      bool within = edit.offset >= offset && edit.offset + edit.length <= offset + length;
      bool atAnEnd = edit.length == 0 && (edit.offset == offset || edit.offset == offset + length);
      if (within && !atAnEnd && !(edit.offset == offset && edit.length == length))
        inside.emplace_back(edit, made);
    }
  sortAsApplied(inside);
  std::vector<Edit> out;
  for (auto &[edit, made] : inside)
    out.push_back(std::move(edit));
  return out;
}

std::string EditSet::textWithEdits(CharSourceRange range, const SourceManager &SM,
                                   const LangOptions &LO) const {
  std::string text = Lexer::getSourceText(range, SM, LO).str();
  std::string file;
  std::optional<Edit> whole = editOf(range, "", SM, file);
  if (!whole)
    return text;
  // Applied from the back, so that each edit's offset into `text` is still the original one.
  std::vector<Edit> inside = editsInside(file, whole->offset, whole->length);
  for (auto it = inside.rbegin(); it != inside.rend(); ++it)
    text.replace(it->offset - whole->offset, it->length, it->text);
  return text;
}

bool EditSet::replaceMoving(CharSourceRange range, llvm::StringRef text, const SourceManager &SM) {
  std::string file;
  std::optional<Edit> edit = editOf(range, text, SM, file);
  if (!edit)
    return false;
  for (const Edit &moved : editsInside(file, edit->offset, edit->length))
    edits_[file].erase(moved);
  edits_[file].emplace(std::move(*edit), sequence_++);
  return true;
}

std::string EditSet::macroKey(SourceLocation definition, const SourceManager &SM) const {
  OptionalFileEntryRef entry = SM.getFileEntryRefForID(SM.getFileID(definition));
  return (entry ? canonicalPath(entry->getName()) : std::string("?")) + ":" +
         std::to_string(SM.getFileOffset(definition));
}

void EditSet::retract(MacroGroup &group) {
  for (const auto &[file, edit] : group.made) {
    auto it = edits_.find(file);
    if (it == edits_.end())
      continue;
    it->second.erase(edit);
    if (it->second.empty())
      edits_.erase(it);
  }
  group.made.clear();
  group.rejected = true;
  unseen_.insert(group.units.begin(), group.units.end());
}

EditSet::MacroGroup &EditSet::groupFor(SourceLocation definition, const SourceManager &SM) {
  MacroGroup &group = macroGroups_[macroKey(definition, SM)];
  if (std::optional<std::string> main = editableMainFile(SM))
    group.units.insert(*main);
  return group;
}

void EditSet::rejectMacroEdits(SourceLocation definition, const SourceManager &SM) {
  retract(groupFor(definition, SM));
}

bool EditSet::applyMacroEdits(SourceLocation definition, const std::vector<MacroEdit> &edits,
                              const SourceManager &SM) {
  std::vector<std::pair<std::string, Edit>> made;
  std::string signature;
  for (const MacroEdit &m : edits) {
    std::string file;
    std::optional<Edit> edit = editOf(m.range, m.text, SM, file);
    if (!edit) {
      rejectMacroEdits(definition, SM);
      return false;
    }
    signature += file + ":" + std::to_string(edit->offset) + "+" + std::to_string(edit->length) +
                 "=" + edit->text + "\n";
    made.emplace_back(std::move(file), std::move(*edit));
  }
  MacroGroup &group = groupFor(definition, SM);
  if (group.rejected || (!group.signature.empty() && group.signature != signature)) {
    retract(group);
    return false;
  }
  if (!group.signature.empty())
    return true; // the same edits, made by an earlier expansion
  group.signature = signature;
  for (auto &[file, edit] : made) {
    // An edit already there (another group's) is not this group's to retract.
    if (edits_[file].emplace(edit, sequence_++).second)
      group.made.emplace_back(file, edit);
  }
  return true;
}

std::vector<std::string> EditSet::files() const {
  std::vector<std::string> out;
  for (const auto &[file, edits] : edits_)
    out.push_back(file);
  return out;
}

llvm::Expected<tooling::Replacements> EditSet::replacementsFor(const std::string &file) const {
  tooling::Replacements result;
  auto it = edits_.find(file);
  if (it == edits_.end())
    return result;
  std::vector<std::pair<Edit, unsigned>> ordered(it->second.begin(), it->second.end());
  sortAsApplied(ordered);
  for (size_t i = 0; i < ordered.size();) {
    Edit merged = ordered[i].first;
    size_t j = i + 1;
    while (merged.length == 0 && j < ordered.size() && ordered[j].first.offset == merged.offset &&
           ordered[j].first.length == 0)
      merged.text += ordered[j++].first.text;
    if (llvm::Error err =
            result.add(tooling::Replacement(file, merged.offset, merged.length, merged.text)))
      return err;
    i = j;
  }
  return result;
}

std::optional<std::string> EditSet::editableMainFile(const clang::SourceManager &SM) const {
  clang::OptionalFileEntryRef main = SM.getFileEntryRefForID(SM.getMainFileID());
  if (!main || !isEditable(SM.getLocForStartOfFile(SM.getMainFileID()), SM))
    return std::nullopt;
  return canonicalPath(main->getName());
}

void EditSet::noteUnseenCode(const clang::SourceManager &SM) {
  if (std::optional<std::string> main = editableMainFile(SM))
    unseen_.insert(*main);
}

void EditSet::noteLibraryMemory(const clang::SourceManager &SM) {
  if (std::optional<std::string> main = editableMainFile(SM)) {
    unseen_.insert(*main);
    library_.insert(*main);
  }
}

} // namespace mgb::rewriter
