// How a rewrite's changes are shown and handed on: a unified diff for --check, and the
// replacements of --export-fixes (clang-apply-replacements' YAML, as clang-tidy writes it).
// Both cover the same span: the changed lines between the common first and last lines.
#ifndef MGB_REWRITER_FILECHANGES_H
#define MGB_REWRITER_FILECHANGES_H

#include "MgbRewrite.h"

#include "clang/Tooling/Core/Replacement.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mgb::rewriter {

// One hunk with 3 lines of context, headed `--- path` / `+++ path (mgb-rewrite)`.
void printUnifiedDiff(const FileResult &r, llvm::raw_ostream &out);

// The one replacement that turns r.original into r.rewritten, on whole lines.
clang::tooling::Replacement replacementFor(const FileResult &r);

// The replacements of every changed file as a TranslationUnitReplacements YAML document.
std::string fixesYaml(const std::vector<FileResult> &results, const std::string &mainSource);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_FILECHANGES_H
