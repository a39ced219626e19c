// Compiler guidance: a static task whose memory is freed only after host work that no longer
// touches it (Rodinia srad_v1 copies its image back, writes it out for 40 s, then frees 12 GB)
// ends at the memory's last use instead. The frees are written there, before the end probe; the
// statements that held them are disabled. Done only where that cannot change what the program
// computes: every use of the memory is a CUDA call or launch of the task (no pointer escapes),
// and the host work in between makes no CUDA call and cannot leave the block.
#ifndef MGB_REWRITER_FREEHOISTING_H
#define MGB_REWRITER_FREEHOISTING_H

#include "BodyFacts.h"
#include "BodyGraph.h"
#include "PlanModel.h"

namespace mgb::rewriter {

// Moves T's end to its memory's last use when that is safe (see above); T must be placed.
void hoistFrees(Task &T, const BodyFacts &facts, const BodyGraph &graph, clang::ASTContext &Ctx);

} // namespace mgb::rewriter

#endif // MGB_REWRITER_FREEHOISTING_H
