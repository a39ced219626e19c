#include "fresh_heap.h"

#include <atomic>
#include <cstdlib>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace mgb::runtime {
namespace {

std::atomic<bool> zeroing{false};

#if defined(__GLIBC__)
// Priority 101, the first a program may use: before libmgb's other static initialisers
// (protobuf's registration runs at 101 and 102 too; what it frees before this is zeroed again
// when handed out, since the perturbation acts on allocation).
__attribute__((constructor(101))) void StartZeroingFreshHeap() {
  if (std::getenv("MALLOC_PERTURB_") != nullptr) return;
  if (mallopt(M_PERTURB, 0xff) == 1) zeroing.store(true);
}
#endif

}  // namespace

bool ZeroingFreshHeap() { return zeroing.load(); }

void StopZeroingFreshHeap() {
#if defined(__GLIBC__)
  if (zeroing.exchange(false)) mallopt(M_PERTURB, 0);
#endif
}

}  // namespace mgb::runtime
