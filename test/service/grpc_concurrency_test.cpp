// 200 concurrent clients with random sizes: memory is never over-granted (checked from Status
// while they run), and everything is released at the end.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <random>
#include <thread>

#include "mgb.pb.h"
#include "mgb/client.h"
#include "test_support.h"

namespace mgb::test {

namespace {

// kClients sessions, each beginning and ending `rounds` tasks of random size, while a checker
// polls Status.
void RunClients(int rounds, uint64_t reserve) {
  constexpr int kClients = 200, kGpus = 4;
  auto d = StartDaemon(kGpus, 16 * kGiB, "mgb", reserve);

  std::atomic<bool> done{false};
  std::atomic<int> polls{0}, violations{0}, max_waiting{0};
  std::thread checker([&] {
    while (!done) {
      auto s = Client::StatusAt(d->socket);
      if (!s.ok()) continue;
      ++polls;
      std::vector<uint64_t> granted(kGpus, 0);
      for (const auto &t : s->tasks()) granted[t.gpu_index()] += t.memory_bytes();
      for (const auto &g : s->gpus()) {
        const uint64_t contexts = uint64_t{g.sessions()} * reserve;
        if (g.memory_reserved_bytes() > g.memory_total_bytes() ||
            granted[g.index()] + contexts != g.memory_reserved_bytes()) {
          ++violations;
        }
      }
      max_waiting = std::max(max_waiting.load(), s->waiting_size());
    }
  });

  std::atomic<int> failures{0}, placed{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      std::mt19937_64 rng(i);
      auto client = Client::Connect(d->socket, getpid(), "client" + std::to_string(i),
                                    std::chrono::seconds(10));
      if (!client.ok()) return void(++failures);
      for (int round = 0; round < rounds; ++round) {
        const uint64_t bytes = (512ull << 20) + rng() % (12 * kGiB);
        auto p = (*client)->TaskBegin(
            bytes, LaunchShape{{1 + uint32_t(rng() % 64), 1, 1}, {128, 1, 1}}, "r");
        if (!p.ok()) return void(++failures);
        ++placed;
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
        if (!(*client)->TaskEnd(p->task_id).ok()) return void(++failures);
      }
    });
  }
  for (auto &t : clients) t.join();
  done = true;
  checker.join();

  CHECK(failures == 0);
  CHECK(placed == kClients * rounds);
  CHECK(polls > 5);
  CHECK(violations == 0);
  CHECK(max_waiting > 0);  // the load really made tasks wait
  auto s = Client::StatusAt(d->socket);
  REQUIRE(s.ok());
  CHECK(s->decisions() == static_cast<uint64_t>(kClients * rounds));
  WaitFor(
      [&] {
        auto t = Client::StatusAt(d->socket);
        return t.ok() && t->sessions() == 0;
      },
      std::chrono::seconds(2));
  s = Client::StatusAt(d->socket);
  for (const auto &g : s->gpus()) CHECK(g.memory_reserved_bytes() == 0);
}

}  // namespace

// Context reserves stay until a session ends, so sessions that touch several GPUs while others
// wait can fill every GPU with reserves and wait on each other (see docs/service.md): with
// reserves, each client runs one task; without, three.
TEST_CASE("memory is never over-granted under 200 concurrent clients", "[grpc][concurrency]") {
  SECTION("with context reserves") { RunClients(1, 256ull << 20); }
  SECTION("three tasks per client") { RunClients(3, 0); }
}

}  // namespace mgb::test
