// Learned peaks through a real mgbd (docs/service.md, "Learned peaks"): a profiled TaskBegin of
// memory 0 gets mgbd's default, then what the last run of the same command line peaked at; the
// peaks survive a restart; `mgb status` shows a running task's peak.
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "mgb.pb.h"
#include "mgb/client.h"
#include "test_support.h"

namespace mgb::test {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

std::string Me() {
  const passwd *me = getpwuid(getuid());
  return me != nullptr ? me->pw_name : std::to_string(getuid());
}

// What mgbd reserves for a learned peak: 1/16 more, whole MiB.
uint64_t WithHeadroom(uint64_t peak) { return (peak + peak / 16 + kMiB - 1) / kMiB * kMiB; }

std::unique_ptr<server::Daemon> StartIn(const TempDir &dir, const std::string &profile_store) {
  server::DaemonOptions options = ConfigGpuOptions(dir, 1, 16 * kGiB);
  options.profile_store = profile_store;
  options.run_default_memory = 2 * kGiB;
  auto d = server::Daemon::Start(options);
  REQUIRE(d.ok());
  return std::move(*d);
}

// MGB_FAST_LANE for the clients this test connects ("0": TaskBegin over gRPC).
struct LaneSetting {
  explicit LaneSetting(bool lane) { setenv("MGB_FAST_LANE", lane ? "1" : "0", 1); }
  ~LaneSetting() { unsetenv("MGB_FAST_LANE"); }
};

}  // namespace

TEST_CASE("a profiled TaskBegin of memory 0: mgbd's default first, then the learned peak",
          "[profile]") {
  const bool lane = GENERATE(true, false);
  INFO((lane ? "fast lane" : "gRPC"));
  LaneSetting setting(lane);
  TempDir dir;
  auto mgbd = StartIn(dir, "");  // the file beside the socket
  const std::string socket = dir.File("mgbd.sock");
  auto client = Client::Connect(socket, getpid(), "trainer");
  REQUIRE(client.ok());
  const std::string key = "python train.py --epochs 3";

  auto first = (*client)->TaskBeginProfiled(key, 0, LaunchShape{}, "first");
  REQUIRE(first.ok());
  CHECK(first->memory_bytes == 2 * kGiB);  // --run-default-mem
  auto status = (*client)->Status();
  REQUIRE(status.ok());
  REQUIRE(status->tasks_size() == 1);
  CHECK(status->tasks(0).memory_bytes() == 2 * kGiB);
  // Reported: 1 GiB now, 3 GiB at the most; then a lower report does not lower the peak.
  REQUIRE((*client)->TaskUsage(first->task_id, kGiB, 3 * kGiB).ok());
  REQUIRE((*client)->TaskUsage(first->task_id, 512 * kMiB).ok());
  status = (*client)->Status();
  REQUIRE(status.ok());
  CHECK(status->tasks(0).peak_bytes() == 3 * kGiB);
  REQUIRE((*client)->TaskEnd(first->task_id).ok());
  (*client)->Flush();

  auto second = (*client)->TaskBeginProfiled(key, 0, LaunchShape{}, "second");
  REQUIRE(second.ok());
  CHECK(second->memory_bytes == WithHeadroom(3 * kGiB));
  CHECK(second->memory_bytes == 3264 * kMiB);
  // Another command line, or a size asked for, is not the learned one.
  auto other = (*client)->TaskBeginProfiled("python eval.py", 0, LaunchShape{}, "other");
  REQUIRE(other.ok());
  CHECK(other->memory_bytes == 2 * kGiB);
  auto sized = (*client)->TaskBeginProfiled(key, 5 * kGiB, LaunchShape{}, "sized");
  REQUIRE(sized.ok());
  CHECK(sized->memory_bytes == 5 * kGiB);
  // Without a profile_key memory 0 stays what it was: nothing reserved. Ordinary tasks say
  // what they were granted too.
  auto plain = (*client)->TaskBegin(0, LaunchShape{}, "plain");
  REQUIRE(plain.ok());
  CHECK(plain->memory_bytes == 0);
  for (const Placement *p : {&*second, &*other, &*sized, &*plain}) {
    REQUIRE((*client)->TaskEnd(p->task_id).ok());
  }
  (*client)->Flush();

  // A run that never reported memory teaches nothing: the learned value stays.
  auto silent = (*client)->TaskBeginProfiled(key, 0, LaunchShape{}, "silent");
  REQUIRE(silent.ok());
  REQUIRE((*client)->TaskEnd(silent->task_id).ok());
  (*client)->Flush();
  auto third = (*client)->TaskBeginProfiled(key, 0, LaunchShape{}, "third");
  REQUIRE(third.ok());
  CHECK(third->memory_bytes == WithHeadroom(3 * kGiB));
  // The latest run's peak counts, also when lower.
  REQUIRE((*client)->TaskUsage(third->task_id, 100 * kMiB).ok());
  REQUIRE((*client)->TaskEnd(third->task_id).ok());
  (*client)->Flush();
  auto fourth = (*client)->TaskBeginProfiled(key, 0, LaunchShape{}, "fourth");
  REQUIRE(fourth.ok());
  CHECK(fourth->memory_bytes == 107 * kMiB);  // 100 MiB + 6.25 MiB, up to whole MiB
  REQUIRE((*client)->TaskEnd(fourth->task_id).ok());
  client->reset();

  // One line per recorded run, appended; the latest wins when the file is read again.
  const std::string file = ReadFile(dir.File("mgbd-profiles.tsv"));
  CHECK_THAT(file,
             Catch::EndsWith("\n" + Me() + "\t" + key + "\t" + std::to_string(100 * kMiB) + "\n"));
  CHECK(server::ProfileStore(dir.File("mgbd-profiles.tsv")).Lookup(Me(), key) == 100 * kMiB);
}

// Issue 33: learned peaks were keyed by the exact command line, so a job whose output path or
// seed changed was never learned; a run that died taught nothing.
TEST_CASE("a program's other runs lend their peak; a running program teaches before it ends",
          "[profile]") {
  TempDir dir;
  auto mgbd = StartIn(dir, "");
  const std::string socket = dir.File("mgbd.sock");
  auto client = Client::Connect(socket, getpid(), "python3");
  REQUIRE(client.ok());
  const std::string program = "/usr/bin/python3.12 /home/ann/train.py";
  auto begin = [&](const std::string &arguments) {
    auto placed =
        (*client)->TaskBeginProfiled(program, 0, LaunchShape{}, "run", std::nullopt, arguments);
    REQUIRE(placed.ok());
    return *placed;
  };
  auto provisional = [&](uint64_t task) {
    auto status = (*client)->Status();
    REQUIRE(status.ok());
    for (const auto &t : status->tasks()) {
      if (t.task_id() == task) {
        CHECK(t.profile_key() == program);
        return t.provisional();
      }
    }
    FAIL("task " << task << " not running");
    return false;
  };
  const std::string big = "python3 train.py --gib 3 --out /runs/1";
  const Placement first = begin(big);
  CHECK(first.memory_bytes == 2 * kGiB);  // nothing known
  CHECK(provisional(first.task_id));
  // While it runs, its peak is kept: a second copy started now reserves it (still a guess).
  REQUIRE((*client)->TaskUsage(first.task_id, 3 * kGiB, 3 * kGiB).ok());
  const Placement copy = begin(big);
  CHECK(copy.memory_bytes == WithHeadroom(3 * kGiB));
  CHECK(provisional(copy.task_id));
  REQUIRE((*client)->TaskEnd(copy.task_id).ok());
  REQUIRE((*client)->TaskEnd(first.task_id).ok());
  (*client)->Flush();
  // The finished run's arguments again: learned, not a guess.
  const Placement again = begin(big);
  CHECK(again.memory_bytes == WithHeadroom(3 * kGiB));
  CHECK_FALSE(provisional(again.task_id));
  REQUIRE((*client)->TaskUsage(again.task_id, 3 * kGiB).ok());
  REQUIRE((*client)->TaskEnd(again.task_id).ok());
  // A small run of the same program.
  const Placement small = begin("python3 train.py --gib 1 --out /runs/2");
  REQUIRE((*client)->TaskUsage(small.task_id, kGiB).ok());
  REQUIRE((*client)->TaskEnd(small.task_id).ok());
  (*client)->Flush();
  // Another output path: the run whose arguments are most alike lends its peak, as a guess.
  const Placement big_elsewhere = begin("python3 train.py --gib 3 --out /runs/9");
  CHECK(big_elsewhere.memory_bytes == WithHeadroom(3 * kGiB));
  CHECK(provisional(big_elsewhere.task_id));
  const Placement small_elsewhere = begin("python3 train.py --gib 1 --out /runs/9");
  CHECK(small_elsewhere.memory_bytes == WithHeadroom(kGiB));
  // Another program learns nothing from these.
  auto other =
      (*client)->TaskBeginProfiled("/usr/bin/python3.12 /home/ann/eval.py", 0, LaunchShape{},
                                   "eval", std::nullopt, "python3 eval.py --gib 3 --out /runs/1");
  REQUIRE(other.ok());
  CHECK(other->memory_bytes == 2 * kGiB);
}

TEST_CASE("a profiled TaskBegin that waits is answered with the reservation mgbd chose",
          "[profile]") {
  const bool lane = GENERATE(true, false);
  INFO((lane ? "fast lane" : "gRPC"));
  LaneSetting setting(lane);
  TempDir dir;
  // A learned peak of 8 GiB for this user (8.5 GiB with headroom), and one of another user.
  std::ofstream(dir.File("peaks.tsv")) << Me() << "\tbig job\t" << 8 * kGiB << "\n"
                                       << "someone-else\tsmall job\t" << kGiB << "\n";
  auto mgbd = StartIn(dir, dir.File("peaks.tsv"));
  const std::string socket = dir.File("mgbd.sock");
  auto holder = Client::Connect(socket, getpid(), "holder");
  REQUIRE(holder.ok());
  auto held = (*holder)->TaskBegin(10 * kGiB, LaunchShape{}, "held");
  REQUIRE(held.ok());
  CHECK(held->memory_bytes == 10 * kGiB);
  auto waiter = Client::Connect(socket, getpid(), "waiter");
  REQUIRE(waiter.ok());
  std::thread ender([&] {
    WaitFor(
        [&] {
          auto s = Client::StatusAt(socket);
          return s.ok() && s->waiting_size() == 1;
        },
        std::chrono::seconds(2));
    (void)(*holder)->TaskEnd(held->task_id);
  });
  auto placed =
      (*waiter)->TaskBeginProfiled("big job", 0, LaunchShape{}, "big",
                                   std::chrono::system_clock::now() + std::chrono::seconds(5));
  ender.join();
  REQUIRE(placed.ok());
  CHECK(placed->memory_bytes == 8 * kGiB + 512 * kMiB);
  // Another user's peak for a command line is not this user's.
  auto small = (*waiter)->TaskBeginProfiled("small job", 0, LaunchShape{}, "small");
  REQUIRE(small.ok());
  CHECK(small->memory_bytes == 2 * kGiB);
}

TEST_CASE("a learned peak is capped at what the largest GPU can hold", "[profile]") {
  TempDir dir;
  std::ofstream(dir.File("peaks.tsv")) << Me() << "\thuge\t" << 40 * kGiB << "\n"
                                       << Me() << "\tabsurd\t18446744073709551615\n";
  auto mgbd = StartIn(dir, dir.File("peaks.tsv"));
  auto client = Client::Connect(dir.File("mgbd.sock"), getpid(), "capped");
  REQUIRE(client.ok());
  for (const char *key : {"huge", "absurd"}) {
    auto placed = (*client)->TaskBeginProfiled(key, 0, LaunchShape{}, key);
    REQUIRE(placed.ok());
    CHECK(placed->memory_bytes == 16 * kGiB);
    REQUIRE((*client)->TaskEnd(placed->task_id).ok());
  }
}

TEST_CASE("mgbd keeps learned peaks across a restart, and mgb status shows a task's peak",
          "[profile][cli]") {
  TempDir dir;
  const std::string socket = dir.File("mgbd.sock");
  const std::string gpus = WriteGpuConfig(dir, 1, 16 * kGiB);
  const std::string store = dir.File("learned.tsv");
  const std::string log = dir.File("mgbd.log");
  // One line of garbage: mgbd warns (file and line) and runs.
  std::ofstream(store) << "garbage\n";
  auto start = [&] {
    // exec: the shell's pid is mgbd's; its stderr goes to the log.
    const int pid = StartProcess({"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>>" + log, MGB_MGBD,
                                  "--socket", socket, "--gpus", gpus, "--context-reserve", "0",
                                  "--profile-store", store, "--run-default-mem", "1500M"});
    WaitFor([&] { return Client::StatusAt(socket, std::chrono::milliseconds(100)).ok(); },
            std::chrono::seconds(5));
    return pid;
  };
  auto stop = [](int pid) {
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  int mgbd = start();
  CHECK_THAT(ReadFile(log), Catch::Contains(store + ":1: ") && Catch::Contains("skipped"));
  // A command line with a tab and a newline in it.
  const std::string key = "sh -c 'printf \"a\\tb\"'\t--flag\nsecond line";
  {
    auto client = Client::Connect(socket, getpid(), "/opt/app/bin/trainer");
    REQUIRE(client.ok());
    auto task = (*client)->TaskBeginProfiled(key, 0, LaunchShape{}, "epoch-1");
    REQUIRE(task.ok());
    CHECK(task->memory_bytes == 1500 * kMiB);
    REQUIRE((*client)->TaskUsage(task->task_id, 2 * kGiB, 5 * kGiB).ok());
    auto table = RunProcess({MGB_CLI, "status", "--socket", socket});
    auto json = RunProcess({MGB_CLI, "status", "--json", "--socket", socket});
    REQUIRE(table.exit_code == 0);
    CHECK_THAT(table.out, Catch::Matches("(.|\n)*ALLOCATED +PEAK +WARPS(.|\n)*"));
    CHECK_THAT(table.out, Catch::Matches("(.|\n)*2\\.00 GiB +5\\.00 GiB(.|\n)*"));
    REQUIRE(json.exit_code == 0);
    auto doc = nlohmann::json::parse(json.out);
    REQUIRE(doc["running_tasks"].size() == 1);
    CHECK(doc["running_tasks"][0]["peak_bytes"] == 5 * kGiB);
    CHECK(doc["running_tasks"][0]["allocated_bytes"] == 2 * kGiB);
    CHECK(doc["running_tasks"][0]["profile_key"] == key);
    CHECK(doc["running_tasks"][0]["provisional"] == true);  // a first run
    CHECK_THAT(table.out, Catch::Contains("learned as") && Catch::Contains("guessed"));
    REQUIRE((*client)->TaskEnd(task->task_id).ok());
  }  // the session ends: the next mgbd does not wait for it
  CHECK(stop(mgbd) == 0);
  // The peak as the run went (partial, "+"), then the finished run's.
  const std::string escaped = Me() + "\tsh -c 'printf \"a\\\\tb\"'\\t--flag\\nsecond line\t";
  CHECK(ReadFile(store) ==
        escaped + std::to_string(5 * kGiB) + "+\n" + escaped + std::to_string(5 * kGiB) + "\n");

  mgbd = start();
  {
    auto client = Client::Connect(socket, getpid(), "trainer");
    REQUIRE(client.ok());
    auto again = (*client)->TaskBeginProfiled(key, 0, LaunchShape{}, "epoch-2");
    REQUIRE(again.ok());
    CHECK(again->memory_bytes == WithHeadroom(5 * kGiB));
  }
  CHECK(stop(mgbd) == 0);
  auto help = RunProcess({MGB_MGBD, "--help"});
  CHECK_THAT(help.out, Catch::Contains("--profile-store") && Catch::Contains("--run-default-mem"));
  CHECK(RunProcess({MGB_MGBD, "--socket", socket, "--run-default-mem", "0"}).exit_code == 2);
}

}  // namespace mgb::test
