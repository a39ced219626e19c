// The arguments of a static task's begin probe (bytes, grid, block, kernel) as source text that
// is valid where the probe goes. Planning asks for it: a task whose size or shape cannot be
// spelled there is bound lazily instead.
#ifndef MGB_REWRITER_PROBETEXT_H
#define MGB_REWRITER_PROBETEXT_H

#include "BodyFacts.h"
#include "BodyGraph.h"
#include "PlanModel.h"

#include "clang/AST/ASTContext.h"

#include <string>

namespace mgb::rewriter {

// Fills T's sizeText, gridText, blockText and kernelText for a begin probe before the statement
// T.region->body()[T.first]; returns why it cannot ("" when it did).
std::string renderProbeText(Task &T, const BodyFacts &facts, const BodyGraph &graph,
                            clang::ASTContext &Ctx);

// A reference that only reads the variable (or a field of it); anything else (assignment, ++,
// address taken, non-const reference or member call) may write it.
bool onlyReads(const clang::DeclRefExpr *ref, const BodyGraph &graph);

// The kernel expression text for `(const void *)K`: the callee as spelled, or "nullptr" when it
// cannot be named (a template whose arguments are deduced).
std::string kernelText(const clang::CUDAKernelCallExpr *call, const clang::SourceManager &SM,
                       const clang::LangOptions &LO, bool inMacroBody);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_PROBETEXT_H
