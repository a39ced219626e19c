// Static binding of one task by dominance (the paper's placement): the region of one block from
// the first allocation, which must dominate every operation of the task, to the frees that
// post-dominate its launches (or the function's end), with an end probe before each return
// that leaves it.
#ifndef MGB_REWRITER_REGIONPLACER_H
#define MGB_REWRITER_REGIONPLACER_H

#include "AliasClasses.h"
#include "BodyFacts.h"
#include "BodyGraph.h"
#include "PlanModel.h"

#include <string>
#include <vector>

namespace mgb::rewriter {

// Sets T's region, span, exits and probe text so that it also covers `handleNodes` (library
// handle calls that start and end with the task); returns why it cannot ("" when it was placed).
std::string placeStatically(Task &T, const std::vector<const clang::Stmt *> &handleNodes,
                            const FunctionPlan &plan, const BodyFacts &facts,
                            const BodyGraph &graph, const AliasClasses &aliases,
                            clang::ASTContext &Ctx);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_REGIONPLACER_H
