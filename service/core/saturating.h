// Unsigned byte arithmetic that stops at zero, shared by the scheduler's units.
#ifndef MGB_SERVICE_CORE_SATURATING_H
#define MGB_SERVICE_CORE_SATURATING_H

#include <cstdint>

namespace mgb::core {

inline uint64_t SaturatingSub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }
inline uint64_t Unallocated(uint64_t memory, uint64_t allocated) {
  return SaturatingSub(memory, allocated);
}

}  // namespace mgb::core

#endif  // MGB_SERVICE_CORE_SATURATING_H
