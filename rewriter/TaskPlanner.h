// Task construction for one function body (the paper's Algorithm 1 on Clang's AST and CFG):
// launches become unit tasks, unit tasks sharing memory objects merge, and each merged task is
// either bound statically (begin/end probes placed by dominance) or left to the lazy layer.
#ifndef MGB_REWRITER_TASKPLANNER_H
#define MGB_REWRITER_TASKPLANNER_H

#include "PlanModel.h"

#include "clang/AST/ASTContext.h"

namespace mgb::rewriter {

// Plans the tasks of one function (or lambda) body. Never fails: what cannot be proven goes lazy.
FunctionPlan planFunction(const clang::FunctionDecl *FD, const clang::Stmt *body,
                          clang::ASTContext &Ctx);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_TASKPLANNER_H
