#include "SourceText.h"

#include "llvm/Support/Path.h"

namespace mgb::rewriter {

using namespace clang;

std::optional<CharSourceRange> fileRange(SourceRange range, const SourceManager &SM,
                                         const LangOptions &LO) {
  CharSourceRange r = Lexer::makeFileCharRange(CharSourceRange::getTokenRange(range), SM, LO);
  if (r.isValid())
    return r;
  // Both ends inside the same macro argument: take where the argument is spelled.
  SourceLocation b = range.getBegin(), e = range.getEnd();
  if (b.isMacroID() && e.isMacroID() && SM.isMacroArgExpansion(b) && SM.isMacroArgExpansion(e)) {
    SourceLocation fb = SM.getImmediateSpellingLoc(b), fe = SM.getImmediateSpellingLoc(e);
    while (fb.isMacroID() && SM.isMacroArgExpansion(fb))
      fb = SM.getImmediateSpellingLoc(fb);
    while (fe.isMacroID() && SM.isMacroArgExpansion(fe))
      fe = SM.getImmediateSpellingLoc(fe);
    if (fb.isFileID() && fe.isFileID() && SM.getFileID(fb) == SM.getFileID(fe) &&
        !SM.isBeforeInTranslationUnit(fe, fb))
      return CharSourceRange::getCharRange(fb, Lexer::getLocForEndOfToken(fe, 0, SM, LO));
  }
  return std::nullopt;
}

// Where a token of a macro expansion is written in the macro's definition: a body token where it
// is spelled, an argument token at the parameter name that brought it in.
static SourceLocation definitionSpelling(SourceLocation loc, const SourceManager &SM) {
  while (loc.isMacroID() && SM.isMacroArgExpansion(loc))
    loc = SM.getImmediateExpansionRange(loc).getBegin();
  return SM.getSpellingLoc(loc);
}

std::optional<CharSourceRange> macroBodyRange(SourceRange range, const SourceManager &SM,
                                              const LangOptions &LO) {
  if (!range.getBegin().isMacroID() || !range.getEnd().isMacroID())
    return std::nullopt;
  SourceLocation b = definitionSpelling(range.getBegin(), SM);
  SourceLocation e = definitionSpelling(range.getEnd(), SM);
  if (b.isInvalid() || e.isInvalid() || SM.getFileID(b) != SM.getFileID(e) ||
      SM.isBeforeInTranslationUnit(e, b))
    return std::nullopt;
  return CharSourceRange::getCharRange(b, Lexer::getLocForEndOfToken(e, 0, SM, LO));
}

std::optional<CharSourceRange> editableRange(SourceRange range, const SourceManager &SM,
                                             const LangOptions &LO) {
  if (auto r = fileRange(range, SM, LO))
    return r;
  return macroBodyRange(range, SM, LO);
}

std::string textOf(CharSourceRange range, const SourceManager &SM, const LangOptions &LO) {
  return Lexer::getSourceText(range, SM, LO).str();
}

std::optional<std::string> spelledText(const Expr *E, const SourceManager &SM,
                                       const LangOptions &LO) {
  if (auto r = fileRange(E->getSourceRange(), SM, LO))
    return textOf(*r, SM, LO);
  return std::nullopt;
}

std::string messageText(const Expr *E, const SourceManager &SM, const LangOptions &LO) {
  if (auto t = spelledText(E, SM, LO))
    return *t;
  return "<macro>";
}

SourceLocation statementBegin(const Stmt *S, const SourceManager &SM) {
  return SM.getExpansionRange(S->getBeginLoc()).getBegin();
}

SourceLocation statementEnd(const Stmt *S, const SourceManager &SM, const LangOptions &LO) {
  SourceLocation last = SM.getExpansionRange(S->getEndLoc()).getEnd();
  SourceLocation after = Lexer::getLocForEndOfToken(last, 0, SM, LO);
  std::optional<Token> next = Lexer::findNextToken(last, SM, LO);
  if (next && next->is(tok::semi))
    return next->getEndLoc();
  return after;
}

std::string indentationAt(SourceLocation loc, const SourceManager &SM) {
  auto [fid, offset] = SM.getDecomposedLoc(loc);
  llvm::StringRef buffer = SM.getBufferData(fid);
  size_t lineStart = buffer.rfind('\n', offset == 0 ? 0 : offset - 1);
  lineStart = lineStart == llvm::StringRef::npos ? 0 : lineStart + 1;
  size_t end = lineStart;
  while (end < buffer.size() && (buffer[end] == ' ' || buffer[end] == '\t'))
    ++end;
  return buffer.substr(lineStart, end - lineStart).str();
}

std::string siteOf(SourceLocation loc, const SourceManager &SM) {
  PresumedLoc p = SM.getPresumedLoc(SM.getExpansionLoc(loc));
  if (p.isInvalid())
    return "unknown";
  return (llvm::sys::path::filename(p.getFilename()) + ":" + llvm::Twine(p.getLine())).str();
}

} // namespace mgb::rewriter
