// Source identity: a rewritten file keeps every original line's number and file name, so that
// __FILE__, __LINE__, assert and the compiler's own diagnostics say what the original compile says.
// The rewrite may insert text holding newlines anywhere; instead of trusting every writer to avoid
// them, the edits are applied here and a `#line` directive follows each one that changes the
// number of lines (docs/rewriter.md, "Source identity").
#ifndef MGB_REWRITER_LINEKEEPING_H
#define MGB_REWRITER_LINEKEEPING_H

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace mgb::rewriter {

// The name a file's #line directives give it: the spelling the original compile uses for it, or
// none (`#line N`: the file keeps whatever name its compile gives it, as for --in-place).
using LineName = std::optional<std::string>;

// `#line N "name"` (the name escaped as a string literal) or `#line N`, with its newline.
std::string lineDirective(unsigned line, const LineName &name);

// The offset after a UTF-8 byte order mark at the start of text (0 when there is none).
size_t afterByteOrderMark(llvm::StringRef text);

// text compiled from elsewhere under its own name: `#line 1 "name"` after any byte order mark
// (text unchanged without a name).
std::string namedCopy(llvm::StringRef text, const LineName &name);

// original with reps applied, byte for byte outside the replacements. After a replacement whose
// text holds a different number of newlines than the text it replaces, the rest of the original
// line is put on a line of its own under `#line N` (N: its original number), indented to its
// original column; inside a preprocessor directive, where no newline may go, the #line follows the
// directive instead.
llvm::Expected<std::string> applyKeepingLines(llvm::StringRef original,
                                              const clang::tooling::Replacements &reps,
                                              const LineName &name);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_LINEKEEPING_H
