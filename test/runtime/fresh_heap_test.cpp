// A rewritten program's host memory reads as zero until its first call into libmgb, as a fresh
// process's does without libmgb (fresh_heap.h), and malloc is glibc's own from that call on.
// A program of its own: no other test may have called into libmgb first.
#include <cstdlib>

#include <catch2/catch.hpp>

#include "fresh_heap.h"
#include "mgb/mgb.h"

namespace {

// Whether a chunk freed with bytes in it comes back zeroed from the next malloc of its size.
// Through volatile: the compiler may drop stores to memory about to be freed and may assume
// anything of memory fresh from malloc; the allocator's behaviour is what is measured here.
bool ReusedChunkReadsZero() {
  constexpr size_t kBytes = 2048;
  auto *first = static_cast<volatile unsigned char *>(std::malloc(kBytes));
  // Keeps the freed chunk from merging into the heap's top, which glibc may hand back to the
  // system (fresh zero pages after that, whatever the setting).
  void *fence = std::malloc(64);
  for (size_t i = 0; i < kBytes; ++i) first[i] = 0xab;
  std::free(const_cast<unsigned char *>(first));
  auto *again = static_cast<volatile unsigned char *>(std::malloc(kBytes));
  std::free(fence);
  // Past the allocator's own words at the start of a freed chunk.
  bool zero = true;
  for (size_t i = 64; i < kBytes; ++i) zero = zero && again[i] == 0;
  std::free(const_cast<unsigned char *>(again));
  return zero;
}

}  // namespace

TEST_CASE("host memory is zeroed until the program's first call into libmgb") {
  if (std::getenv("MALLOC_PERTURB_") != nullptr) {
    WARN("MALLOC_PERTURB_ is set: libmgb leaves it as the user set it, nothing to check");
    return;
  }
  REQUIRE(mgb::runtime::ZeroingFreshHeap());
  CHECK(ReusedChunkReadsZero());

  setenv("MGB_UNMANAGED", "1", 1);  // no mgbd needed: the entry below is what ends the zeroing
  (void)mgb_cudaGetLastError();
  CHECK_FALSE(mgb::runtime::ZeroingFreshHeap());
  CHECK_FALSE(ReusedChunkReadsZero());  // glibc's own malloc again: the old bytes come back
}
