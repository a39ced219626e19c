// Which local allocations each kernel launch and library call of a function uses (its memory
// objects), or why it must be bound lazily (a pointer from a parameter, a field, a struct of
// device pointers...). Library calls with no device memory of either kind leave the plan.
#ifndef MGB_REWRITER_LAUNCHOBJECTS_H
#define MGB_REWRITER_LAUNCHOBJECTS_H

#include "AliasClasses.h"
#include "BodyFacts.h"
#include "PlanModel.h"

namespace mgb::rewriter {

void describeLaunches(FunctionPlan &plan, const BodyFacts &facts, const AliasClasses &aliases,
                      clang::ASTContext &Ctx);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_LAUNCHOBJECTS_H
