// Memory accounting: context reserves, and the NVML term (memory used outside mgbd, granted but
// not yet allocated).
#include "core_test_support.h"

namespace mgb::test {

TEST_CASE("context reserve: charged once per session and GPU, held until the session ends",
          "[core][memory]") {
  Core c(Gpus(1, 16 * kGB), "mgb", kGB);
  const auto a = c.Open(), b = c.Open();
  c.Begin(a, Request(10 * kGB));
  CHECK(c.Available(0) == 5 * kGB);  // 16 - 10 - 1 (a's context)
  const auto second = c.Begin(a, Request(5 * kGB));
  CHECK(second.gpu == 0);  // a already has its context here: no second reserve
  CHECK(c.Available(0) == 0);
  REQUIRE(c.s->TaskEnd(a, second.task, 1).ok());
  const auto other = c.Begin(b, Request(9 * kGB / 2));
  CHECK(other.gpu == -1);  // 4.5 GB + b's 1 GB context > 5 GB free
  REQUIRE(c.s->TaskEnd(a, 1, 2).ok());
  CHECK(c.sink.PlacedOn(other.task) == 0);
  // a has no task left but keeps its context reserve until it ends.
  CHECK(c.s->Status().gpus[0].memory_reserved == 9 * kGB / 2 + 2 * kGB);
  CHECK(c.s->Status().gpus[0].sessions == 2);
  REQUIRE(c.s->CloseSession(a, 3).ok());
  CHECK(c.s->Status().gpus[0].memory_reserved == 9 * kGB / 2 + kGB);
}

TEST_CASE("NVML term: memory used by others counts, granted-but-unallocated is held back",
          "[core][memory]") {
  auto gpus = Gpus(1, 16 * kGB);
  gpus[0].has_nvml = true;
  Core c(gpus, "mgb", kGB);
  // Another program mgbd does not manage uses 6 GB: NVML says 10 GB free.
  c.s->UpdateDeviceMemory(0, 10 * kGB, 6 * kGB, 0);
  CHECK(c.Available(0) == 10 * kGB);
  const auto s = c.Open();
  const auto t = c.Begin(s, Request(4 * kGB));
  REQUIRE(t.gpu == 0);
  // Granted 4 GB + 1 GB context, nothing allocated yet, NVML unchanged: 10 - 4 - 1.
  CHECK(c.Available(0) == 5 * kGB);
  // The program allocated 3 GB (context created too): NVML now says 10 - 3 - 1 free.
  REQUIRE(c.s->TaskUsage(s, t.task, 3 * kGB, 1).ok());
  c.s->UpdateDeviceMemory(0, 6 * kGB, 10 * kGB, 1);
  CHECK(c.Available(0) == 5 * kGB);  // 6 free - 1 GB still unallocated
  const auto big = c.Begin(s, Request(12 * kGB), 1);
  CHECK(big.gpu == -1);
  // The other program exits: NVML frees 6 GB, the waiting task still does not fit (capacity:
  // 16 - 4 - 1 = 11 < 12) until ours ends.
  c.s->UpdateDeviceMemory(0, 12 * kGB, 4 * kGB, 2);
  CHECK(c.sink.PlacedOn(big.task) == -1);
  REQUIRE(c.s->TaskEnd(s, t.task, 3).ok());
  c.s->UpdateDeviceMemory(0, 15 * kGB, kGB, 3);  // its memory is freed; the context stays
  CHECK(c.sink.PlacedOn(big.task) == 0);
}

}  // namespace mgb::test
