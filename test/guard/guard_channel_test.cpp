// The ledger and grow channel between `mgb run` and the guard (guard/channel): one file mapped by
// both sides, grows asked over a Unix socket, from threads and from a forked child.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "grow_channel.h"
#include "run_ledger.h"

namespace mgb::guard {
namespace {

struct RunDir {
  std::string path;
  RunDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "mgb-guard-test-XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~RunDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("the ledger is shared between its creator and the guard's mapping", "[guard]") {
  RunDir dir;
  std::string error;
  auto created = RunLedger::Create(dir.path, {100}, 500, &error);
  REQUIRE(created != nullptr);
  auto opened = RunLedger::Open(dir.path, &error);
  REQUIRE(opened != nullptr);
  CHECK(opened->counters().gpu[0].reserved == 100);
  CHECK(opened->counters().cap == 500);
  opened->counters().gpu[0].allocated += 42;
  CHECK(created->counters().gpu[0].allocated == 42);
  CHECK(RunLedger::Create(dir.path, {1}, 1, &error) == nullptr);  // never over an existing run's
  CHECK_THAT(error, Catch::Contains(dir.path + "/ledger"));
}

TEST_CASE("a ledger that is not one is refused with its path", "[guard]") {
  RunDir dir;
  std::string error;
  CHECK(RunLedger::Open(dir.path, &error) == nullptr);
  CHECK_THAT(error, Catch::Contains("cannot open " + dir.path + "/ledger"));
  std::ofstream(dir.path + "/ledger") << std::string(256, 'x');
  CHECK(RunLedger::Open(dir.path, &error) == nullptr);
  CHECK_THAT(error, Catch::Contains("not an mgb run ledger"));
}

TEST_CASE("grows are answered in order, from threads and a forked child; none after the server",
          "[guard]") {
  RunDir dir;
  std::string error;
  uint64_t granted = 0;
  uint32_t asked_gpu = 99;
  auto server = GrowServer::Start(
      dir.path,
      [&](uint64_t missing, uint32_t gpu) {
        asked_gpu = gpu;
        GrowAnswer answer;
        if (missing > 1000) {
          answer.verdict = GrowAnswer::kRefused;
          answer.message = "too much";
          return answer;
        }
        granted += missing;
        answer.verdict = GrowAnswer::kGranted;
        answer.reserved = granted;
        return answer;
      },
      &error);
  REQUIRE(server != nullptr);
  GrowRequester requester(dir.path);
  CHECK(requester.Ask(10, 0).verdict == GrowAnswer::kGranted);
  CHECK(asked_gpu == 0);
  CHECK(requester.Ask(0, 3).verdict == GrowAnswer::kGranted);
  CHECK(asked_gpu == 3);  // the run's GPU the grow is for travels with it
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 25; ++j) CHECK(requester.Ask(1, 0).verdict == GrowAnswer::kGranted);
    });
  }
  for (auto &t : threads) t.join();
  const GrowAnswer refused = requester.Ask(5000, 0);
  CHECK(refused.verdict == GrowAnswer::kRefused);
  CHECK(refused.message == "too much");
  const pid_t child = fork();
  if (child == 0)
    _exit(requester.Ask(5, 0).verdict == GrowAnswer::kGranted && requester.Ask(0, 0).reserved == 115
              ? 0
              : 1);
  int status = 0;
  waitpid(child, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(granted == 115);
  server.reset();
  const GrowAnswer gone = requester.Ask(1, 0);
  CHECK(gone.verdict == GrowAnswer::kUnavailable);
  CHECK_THAT(gone.message, Catch::Contains("mgb run"));
}

}  // namespace mgb::guard
