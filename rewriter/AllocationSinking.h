// Compiler guidance, the mirror of FreeHoisting: a static task whose memory is allocated before
// host work that does not touch it (Rodinia srad_v2 allocates 52 GB, then makes its image on the
// host for half a minute) begins at the memory's first use instead. The allocations stay where
// they are: outside a task libmgb gives them reserved addresses with no memory behind them
// (docs/runtime.md, "Lazy layer"); the begin, moved down, binds them to the task at once
// (mgb_prepare_pointers), so the task's launches find them real. Done only where that cannot
// change what the program computes: the statements passed over are the task's cudaMalloc calls
// of local pointers and host work (no use of the task's memory, no CUDA call or launch, no way
// out of the block), and every variable the begin reads in their place (sizes, pointers) is in
// scope there and not written on the way.
#ifndef MGB_REWRITER_ALLOCATIONSINKING_H
#define MGB_REWRITER_ALLOCATIONSINKING_H

#include "BodyFacts.h"
#include "BodyGraph.h"
#include "PlanModel.h"

namespace mgb::rewriter {

// Moves T's begin down to its memory's first use when that is safe and passes over host work
// (see above); T must be placed, its probe text rendered.
void sinkAllocations(Task &T, const BodyFacts &facts, const BodyGraph &graph,
                     clang::ASTContext &Ctx);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_ALLOCATIONSINKING_H
