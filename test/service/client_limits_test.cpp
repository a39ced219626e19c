// What one local user may hold in mgbd (service/server/client_limits.h; issue 32, item 5):
// sessions, tasks, waiting tasks and Watch streams per user, the length of labels, and how many
// tasks Status lists, against a real mgbd over its socket.
#include <unistd.h>

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "error_reasons.h"
#include "mgb/client.h"
#include "test_support.h"

namespace mgb::test {
namespace {

constexpr auto kSecond = std::chrono::seconds(1);

std::chrono::system_clock::time_point In(std::chrono::milliseconds ms) {
  return std::chrono::system_clock::now() + ms;
}

}  // namespace

TEST_CASE("65,000-byte labels are cut, and mgb status works for everyone after 100 of them",
          "[limits][hostile]") {
  auto d = StartDaemon(1, 16 * kGiB);
  auto client = Client::Connect(d->socket, getpid(), "labels");
  REQUIRE(client.ok());
  const std::string huge(65000, 'x');
  for (int i = 0; i < 100; ++i) {
    REQUIRE((*client)->TaskBegin(kGiB / 16, LaunchShape{}, huge).ok());
  }
  auto status = Client::StatusAt(d->socket);
  REQUIRE(status.ok());  // before: "Received message larger than max" after 80
  REQUIRE(status->tasks_size() == 100);
  CHECK(status->tasks(0).label() == std::string(256, 'x'));
}

TEST_CASE("a user's sessions, tasks and waiting tasks stop at their limits; others go on",
          "[limits][hostile]") {
  auto d = StartDaemonWith(1, 16 * kGiB, [](server::DaemonOptions &options) {
    options.client_limits.sessions_per_user = 3;
    options.client_limits.tasks_per_user = 6;
    options.client_limits.waiting_per_user = 2;
  });
  std::vector<std::unique_ptr<Client>> sessions;
  for (int i = 0; i < 3; ++i) {
    auto client = Client::Connect(d->socket, getpid(), "many");
    REQUIRE(client.ok());
    sessions.push_back(std::move(*client));
  }
  auto fourth = Client::Connect(d->socket, getpid(), "many");
  REQUIRE_FALSE(fourth.ok());
  CHECK(fourth.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(ReasonOf(fourth.status()) == ErrorReason::kUserLimit);
  CHECK_THAT(std::string(fourth.status().message()), Catch::Contains("3 sessions"));

  Client &c = *sessions[0];
  auto big = c.TaskBegin(14 * kGiB, LaunchShape{}, "fills the GPU");
  REQUIRE(big.ok());
  // Two may wait; the third waiter is refused at once.
  std::vector<std::thread> waiters;
  std::atomic<int> timed_out{0};
  for (int i = 0; i < 2; ++i) {
    waiters.emplace_back([&] {
      auto waited =
          c.TaskBegin(8 * kGiB, LaunchShape{}, "waits", In(std::chrono::milliseconds(1500)));
      if (waited.status().code() == absl::StatusCode::kDeadlineExceeded) ++timed_out;
    });
  }
  REQUIRE(WaitFor([&] { return Client::StatusAt(d->socket)->waiting_size() == 2; }, 2 * kSecond) <
          2 * kSecond);
  auto third =
      c.TaskBegin(8 * kGiB, LaunchShape{}, "waits too", In(std::chrono::milliseconds(1500)));
  CHECK(ReasonOf(third.status()) == ErrorReason::kUserLimit);
  CHECK_THAT(std::string(third.status().message()), Catch::Contains("2 waiting tasks"));
  for (std::thread &t : waiters) t.join();
  CHECK(timed_out == 2);
  // Six tasks in all (running and waiting): big and five more; the seventh is refused.
  for (int i = 0; i < 5; ++i) REQUIRE(c.TaskBegin(kGiB / 8, LaunchShape{}, "small").ok());
  auto seventh = c.TaskBegin(kGiB / 8, LaunchShape{}, "small");
  CHECK(ReasonOf(seventh.status()) == ErrorReason::kUserLimit);
  // What ends is counted out: one more fits again, and a closed session makes room for a new one.
  REQUIRE(c.TaskEnd(big->task_id).ok());
  c.Flush();
  CHECK(c.TaskBegin(kGiB / 8, LaunchShape{}, "small").ok());
  sessions.pop_back();
  CHECK(WaitFor([&] { return Client::Connect(d->socket, getpid(), "many").ok(); }, 2 * kSecond) <
        2 * kSecond);
}

TEST_CASE("Watch streams are capped per user, and Status lists a bounded number of tasks",
          "[limits][hostile]") {
  auto d = StartDaemonWith(1, 16 * kGiB, [](server::DaemonOptions &options) {
    options.client_limits.watchers_per_user = 2;
    options.client_limits.status_tasks = 5;
  });
  auto client = Client::Connect(d->socket, getpid(), "watched");
  REQUIRE(client.ok());
  uint32_t running = 0;
  // Events until each watcher has seen one: then both are in.
  const auto until_seen = [&](const std::array<std::atomic<bool>, 2> &seen) {
    for (auto t0 = std::chrono::steady_clock::now(); !(seen[0] && seen[1]);) {
      REQUIRE(std::chrono::steady_clock::now() - t0 < 5 * kSecond);
      REQUIRE((*client)->TaskBegin(kGiB / 64, LaunchShape{}, "event").ok());
      ++running;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  };
  for (int round = 0; round < 2; ++round) {  // the second: those of the first were counted out
    std::array<std::atomic<bool>, 2> seen{};
    std::atomic<bool> stop{false};
    std::vector<std::thread> watchers;
    for (int i = 0; i < 2; ++i) {
      watchers.emplace_back([&, i] {
        // Refused while mgbd has not yet counted out a watcher of the round before: again.
        while (!stop && ReasonOf(Client::WatchAt(d->socket, [&](const v1::Event &) {
                          seen[static_cast<size_t>(i)] = true;
                          return !stop;
                        })) == ErrorReason::kUserLimit) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
      });
    }
    until_seen(seen);
    absl::Status third = Client::WatchAt(d->socket, [](const v1::Event &) { return false; });
    CHECK(ReasonOf(third) == ErrorReason::kUserLimit);
    stop = true;
    REQUIRE((*client)->TaskBegin(kGiB / 64, LaunchShape{}, "last event").ok());
    ++running;
    for (std::thread &t : watchers) t.join();
  }
  for (int i = 0; i < 8; ++i, ++running) {
    REQUIRE((*client)->TaskBegin(kGiB / 64, LaunchShape{}, "listed or counted").ok());
  }
  auto status = Client::StatusAt(d->socket);
  REQUIRE(status.ok());
  CHECK(status->tasks_size() == 5);
  CHECK(status->tasks_not_listed() == running - 5);
}

TEST_CASE("a request past 1 MiB is refused at the door by gRPC; mgbd goes on",
          "[limits][hostile]") {
  auto d = StartDaemon(1, 16 * kGiB);
  setenv("MGB_FAST_LANE", "0", 1);
  auto client = Client::Connect(d->socket, getpid(), "big-requests");
  unsetenv("MGB_FAST_LANE");
  REQUIRE(client.ok());
  auto refused = (*client)->TaskBegin(kGiB, LaunchShape{}, std::string(2 << 20, 'x'));
  CHECK(refused.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK((*client)->TaskBegin(kGiB, LaunchShape{}, "small").ok());
}

}  // namespace mgb::test
