// Turns a FunctionPlan into edits: task probes for static tasks, mgb_prepare + mgb_arg for lazy
// launches, mgb_real_stream around explicit streams; and the --explain text.
#ifndef MGB_REWRITER_PROBEWRITER_H
#define MGB_REWRITER_PROBEWRITER_H

#include "EditSet.h"
#include "PlanModel.h"

#include "RewriteDiagnostics.h"

#include "llvm/Support/raw_ostream.h"

namespace mgb::rewriter {

// Writes the plan's edits; warnings (a launch that could not be edited) go to `diagnostics`.
void writeProbes(const FunctionPlan &plan, const clang::Stmt *body, clang::ASTContext &Ctx,
                 EditSet &edits, llvm::raw_ostream &explain, RewriteDiagnostics &diagnostics);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_PROBEWRITER_H
