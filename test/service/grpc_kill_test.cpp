// A client process killed with SIGKILL, while holding and while waiting: its memory is free (or
// its wait withdrawn) within 1 s, through the Attach stream's end.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "mgb.pb.h"
#include "mgb/client.h"
#include "test_support.h"

namespace mgb::test {
namespace {

v1::StatusReply StatusOf(const TestDaemon &d) {
  auto s = Client::StatusAt(d.socket);
  REQUIRE(s.ok());
  return *s;
}

std::chrono::milliseconds KillAndWait(int pid, const std::function<bool()> &released) {
  kill(pid, SIGKILL);
  const auto took = WaitFor(released, std::chrono::seconds(2));
  waitpid(pid, nullptr, 0);
  return took;
}

}  // namespace

TEST_CASE("SIGKILL while holding: the memory is free within 1 s", "[grpc][kill]") {
  auto d = StartDaemon(1, 16 * kGiB, "mgb", kGiB);
  const int pid = StartProcess({MGB_TEST_HOLDER, d->socket, std::to_string(8 * kGiB)});
  WaitFor([&] { return StatusOf(*d).tasks_size() == 1; }, std::chrono::seconds(5));
  REQUIRE(StatusOf(*d).tasks_size() == 1);
  CHECK(StatusOf(*d).gpus(0).memory_reserved_bytes() == 9 * kGiB);
  const auto took =
      KillAndWait(pid, [&] { return StatusOf(*d).gpus(0).memory_reserved_bytes() == 0; });
  CHECK(took < std::chrono::seconds(1));
  CHECK(StatusOf(*d).sessions() == 0);
}

TEST_CASE("SIGKILL while waiting: the wait is withdrawn within 1 s", "[grpc][kill]") {
  auto d = StartDaemon(1, 16 * kGiB);
  auto owner = Client::Connect(d->socket, getpid(), "owner");
  REQUIRE(owner.ok());
  auto all = (*owner)->TaskBegin(16 * kGiB, LaunchShape{}, "all");
  REQUIRE(all.ok());
  const int pid = StartProcess({MGB_TEST_HOLDER, d->socket, std::to_string(4 * kGiB)});
  WaitFor([&] { return StatusOf(*d).waiting_size() == 1; }, std::chrono::seconds(5));
  REQUIRE(StatusOf(*d).waiting_size() == 1);
  const auto took = KillAndWait(pid, [&] { return StatusOf(*d).waiting_size() == 0; });
  CHECK(took < std::chrono::seconds(1));
  // The dead waiter is gone for good: a release places nothing for it.
  const uint64_t decisions = StatusOf(*d).decisions();
  REQUIRE((*owner)->TaskEnd(all->task_id).ok());
  (*owner)->Flush();
  CHECK(StatusOf(*d).decisions() == decisions);
  CHECK(StatusOf(*d).gpus(0).memory_reserved_bytes() == 0);
}

}  // namespace mgb::test
