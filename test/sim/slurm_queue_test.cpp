// Slurm's side alone: the pending queue answers "the oldest job asking at most X" (FIFO with skip)
// and the node choice is the first node in order with room.
#include <catch2/catch.hpp>

#include "slurm_queue.h"
#include "slurm_select.h"

using namespace mgb::sim;

TEST_CASE("pending queue: the oldest job that fits, skipping larger ones", "[sim][cluster]") {
  PendingQueue queue(5);
  CHECK_FALSE(queue.OldestAtMost(100).has_value());
  queue.Add(0, 80);
  queue.Add(1, 30);
  queue.Add(3, 50);
  CHECK(queue.size() == 3);
  CHECK(queue.OldestAtMost(100) == 0u);
  CHECK(queue.OldestAtMost(60) == 1u);  // skips the 80 at the head
  CHECK(queue.OldestAtMost(29) == std::nullopt);
  queue.Remove(1);
  CHECK(queue.OldestAtMost(60) == 3u);
  queue.Remove(0);
  queue.Remove(3);
  CHECK(queue.size() == 0);
  CHECK_FALSE(queue.OldestAtMost(1000).has_value());
}

TEST_CASE("node choice: first node in order whose free count covers the request",
          "[sim][cluster]") {
  GresPool pool(3, 100);
  CHECK(pool.FirstFit(100) == 0u);
  pool.Grant(0, 70);
  CHECK(pool.FirstFit(30) == 0u);
  CHECK(pool.FirstFit(31) == 1u);
  CHECK(pool.MostFree() == 100);
  pool.Grant(1, 100);
  pool.Grant(2, 90);
  CHECK(pool.MostFree() == 30);
  CHECK_FALSE(pool.FirstFit(31).has_value());
  pool.Release(1, 100);
  CHECK(pool.FirstFit(31) == 1u);
  CHECK(pool.peak_granted() == std::vector<uint64_t>{70, 100, 90});
}
