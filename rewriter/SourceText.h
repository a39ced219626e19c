// Where source constructs are spelled, so that edits land in files (never in macro expansions
// that cannot be edited) and copied text is exactly what the user wrote.
#ifndef MGB_REWRITER_SOURCETEXT_H
#define MGB_REWRITER_SOURCETEXT_H

#include "clang/AST/Expr.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <optional>
#include <string>

namespace mgb::rewriter {

// The file range of a construct spelled in a file, directly or as one macro argument
// (`CHECK(cudaMalloc(&p, n))`); nullopt when part of it comes from a macro body.
std::optional<clang::CharSourceRange>
fileRange(clang::SourceRange range, const clang::SourceManager &SM, const clang::LangOptions &LO);

// The range inside one macro definition where a construct from a macro body is spelled; nullopt
// when it spans several macros or argument and body.
std::optional<clang::CharSourceRange> macroBodyRange(clang::SourceRange range,
                                                     const clang::SourceManager &SM,
                                                     const clang::LangOptions &LO);

// fileRange, else macroBodyRange: where an edit of this construct must go.
std::optional<clang::CharSourceRange> editableRange(clang::SourceRange range,
                                                    const clang::SourceManager &SM,
                                                    const clang::LangOptions &LO);

std::string textOf(clang::CharSourceRange range, const clang::SourceManager &SM,
                   const clang::LangOptions &LO);

// Text of an expression as the user spelled it (file or macro argument); nullopt otherwise.
std::optional<std::string> spelledText(const clang::Expr *E, const clang::SourceManager &SM,
                                       const clang::LangOptions &LO);

// spelledText for messages: "<macro>" when a macro body spells part of E.
std::string messageText(const clang::Expr *E, const clang::SourceManager &SM,
                        const clang::LangOptions &LO);

// The location where a statement starts in the file (the macro name for a macro statement).
clang::SourceLocation statementBegin(const clang::Stmt *S, const clang::SourceManager &SM);

// The location just past a statement including its terminating ';'.
clang::SourceLocation statementEnd(const clang::Stmt *S, const clang::SourceManager &SM,
                                   const clang::LangOptions &LO);

// The whitespace that starts the line holding loc (to indent inserted lines alike).
std::string indentationAt(clang::SourceLocation loc, const clang::SourceManager &SM);

// "file.cu:LINE" for probe sites (file name only: stable across build directories).
std::string siteOf(clang::SourceLocation loc, const clang::SourceManager &SM);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_SOURCETEXT_H
