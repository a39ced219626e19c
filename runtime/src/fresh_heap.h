// Host memory a program allocates before its first CUDA call reads as zero, as it does without
// libmgb. A fresh process's heap holds only fresh (zeroed) pages, and programs that read an
// array they filled only in part (a compaction's output checked in full against a host result
// also filled in part) print the same zeros every run. libmgb's static initialisers (protobuf's
// descriptor registration) free memory before main, and glibc hands those chunks, with their old
// bytes, to the program's first mallocs: seen in a third-party program that printed hundreds of
// mismatches rewritten and none as written (docs/runtime.md, "Host memory before the first call").
// So from libmgb's first static initialiser until the program's first call into libmgb, glibc
// zeroes every allocation (mallopt M_PERTURB 0xff: malloc fills with 0xff ^ 0xff); that first
// call stops it, since from there on CUDA's own initialisation churns the heap of the program as
// written too. A MALLOC_PERTURB_ of the user's own is left alone.
#ifndef MGB_RUNTIME_FRESH_HEAP_H
#define MGB_RUNTIME_FRESH_HEAP_H

namespace mgb::runtime {

// Whether allocations are being zeroed now.
bool ZeroingFreshHeap();
// Ends the zeroing (idempotent; the C API's first entry calls it).
void StopZeroingFreshHeap();

}  // namespace mgb::runtime

#endif  // MGB_RUNTIME_FRESH_HEAP_H
