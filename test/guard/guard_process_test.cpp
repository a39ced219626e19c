// The guard in real processes: `mgb run` (no --mem) preloads libmgb-guard.so into a program that
// reaches a fake CUDA driver (fake_libcuda.c) the way the CUDA runtime does (dlopen, dlsym,
// cuGetProcAddress) or linked with -lcuda, against an in-process mgbd with config GPUs.
#include <signal.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <thread>

#include "mgb.pb.h"
#include "mgb/client.h"
#include "test_support.h"

namespace mgb::test {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;

std::vector<std::string> Env(const TestDaemon &mgbd) {
  return {"MGB_SOCKET=" + mgbd.socket, "LD_LIBRARY_PATH=" + std::string(FAKE_DRIVER_DIR)};
}

std::vector<std::string> Run(std::vector<std::string> flags, std::vector<std::string> program) {
  std::vector<std::string> argv = {MGB_CLI, "run"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

// The first running task's status, once `ready` holds for it (or nothing after 5 s).
std::optional<v1::TaskStatus> TaskWhen(const TestDaemon &mgbd,
                                       const std::function<bool(const v1::TaskStatus &)> &ready) {
  std::optional<v1::TaskStatus> seen;
  WaitFor(
      [&] {
        auto status = Client::StatusAt(mgbd.socket);
        if (!status.ok() || status->tasks_size() == 0 || !ready(status->tasks(0))) return false;
        seen = status->tasks(0);
        return true;
      },
      std::chrono::seconds(5));
  return seen;
}

}  // namespace

TEST_CASE(
    "mgb run without --mem: the guard counts what the program allocates and grows its grant; "
    "the next run starts from the learned peak",
    "[guard]") {
  auto mgbd = StartDaemon(1, 16 * kGiB);
  const auto argv = Run({}, {GUARD_PROBE, "alloc:3072", "async:1024", "sleep:1500", "free"});
  ProcessResult run;
  std::thread runner([&] { run = RunProcess(argv, Env(*mgbd)); });
  auto task =
      TaskWhen(*mgbd, [](const v1::TaskStatus &t) { return t.allocated_bytes() == 4 * kGiB; });
  runner.join();
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("alloc:3072 rc=0") && Catch::Contains("async:1024 rc=0") &&
                          Catch::Contains("free rc=0"));
  REQUIRE(task);
  CHECK(task->memory_bytes() >= 4 * kGiB);  // grown from mgbd's default first grant
  CHECK(task->peak_bytes() == 4 * kGiB);
  // Learned: the same command line starts with its peak (and a little more) reserved.
  ProcessResult again;
  std::thread second([&] { again = RunProcess(argv, Env(*mgbd)); });
  auto first_grant = TaskWhen(*mgbd, [](const v1::TaskStatus &) { return true; });
  second.join();
  REQUIRE(first_grant);
  CHECK(first_grant->memory_bytes() >= 4 * kGiB);
  CHECK(first_grant->memory_bytes() < 5 * kGiB);
  auto after = Client::StatusAt(mgbd->socket);
  REQUIRE(after.ok());
  CHECK(after->gpus(0).memory_reserved_bytes() == 0);
}

TEST_CASE(
    "mgb run --max-mem: past it the allocation fails with out-of-memory and cuMemGetInfo shows the "
    "cap",
    "[guard]") {
  auto mgbd = StartDaemon(1, 16 * kGiB);
  for (const char *probe : {GUARD_PROBE, GUARD_PROBE_LINKED}) {
    auto run = RunProcess(
        Run({"--max-mem", "2G"}, {probe, "alloc:1024", "info", "alloc:2048", "vmm:512", "info"}),
        Env(*mgbd));
    INFO(probe << "\n" << run.out << run.err);
    CHECK(run.exit_code == 0);
    CHECK_THAT(run.out, Catch::Contains("info free=1024 total=2048 MiB"));
    CHECK_THAT(run.out, Catch::Contains("alloc:2048 rc=2"));  // CUDA_ERROR_OUT_OF_MEMORY
    CHECK_THAT(run.out, Catch::Contains("vmm:512 rc=0"));
    CHECK_THAT(run.out, Catch::Contains("info free=512 total=2048 MiB"));
    CHECK_THAT(run.err, Catch::Contains("past --max-mem"));
  }
  CHECK(RunProcess(Run({"--mem", "2G", "--max-mem", "1G"}, {"true"}), Env(*mgbd)).exit_code == 2);
}

// Issue 32, item 10: dlsym(RTLD_NEXT, "cuMemAlloc_v2") from a library after the guard reached
// the driver uncounted.
TEST_CASE("a preloaded library's dlsym(RTLD_NEXT) gets the guard's allocation, counted",
          "[guard][hostile]") {
  auto mgbd = StartDaemon(1, 16 * kGiB);
  std::vector<std::string> env = Env(*mgbd);
  env.push_back("LD_PRELOAD=" + std::string(NEXT_ALLOC_PRELOAD));  // mgb run puts the guard first
  auto run = RunProcess(Run({"--max-mem", "1G"}, {GUARD_PROBE_LINKED, "nextalloc:2048"}), env);
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("nextalloc:2048 rc=2"));  // out-of-memory past --max-mem
}

// Issue 32, item 10: paths on which a run that promised counting ran unguarded.
TEST_CASE("mgb run fails closed: an unwritable TMPDIR, a bad guard, a program that drops root",
          "[guard][hostile]") {
  auto mgbd = StartDaemon(1, 16 * kGiB);
  SECTION("TMPDIR cannot be written: the run directory goes to /tmp") {
    std::vector<std::string> env = Env(*mgbd);
    env.push_back("TMPDIR=/nonexistent/tmp");
    auto run = RunProcess(Run({"--max-mem", "1G"}, {GUARD_PROBE, "alloc:2048"}), env);
    INFO(run.out << run.err);
    CHECK_THAT(run.out, Catch::Contains("alloc:2048 rc=2"));  // counted: past --max-mem
  }
  SECTION("a guard library that cannot be loaded: the run does not start") {
    std::vector<std::string> env = Env(*mgbd);
    env.push_back("MGB_GUARD_LIB=/etc/hostname");
    auto run = RunProcess(Run({"--max-mem", "1G"}, {GUARD_PROBE, "alloc:2048"}), env);
    CHECK(run.exit_code == 1);
    CHECK(run.out.empty());
    CHECK_THAT(run.err, Catch::Contains("cannot be loaded") && Catch::Contains("--no-guard"));
  }
  SECTION("root's program that becomes another user is still counted") {
    // Only root can drop to another user, who must reach the probe and the fake driver.
    if (geteuid() != 0 || !ReachableByOthers(FAKE_DRIVER_DIR + std::string("/x")) ||
        !ReachableByOthers(GUARD_PROBE_LINKED)) {
      WARN("skipped: not root, or the build is in a folder other users cannot reach");
      return;
    }
    auto run = RunProcess(
        Run({"--max-mem", "1G"}, {GUARD_PROBE_LINKED, "setuid:65534", "alloc:2048", "alloc:512"}),
        Env(*mgbd));
    INFO(run.out << run.err);
    CHECK_THAT(run.out, Catch::Contains("setuid:65534 rc=0"));
    CHECK_THAT(run.out, Catch::Contains("alloc:2048 rc=2") && Catch::Contains("alloc:512 rc=0"));
  }
  auto status = Client::StatusAt(mgbd->socket);
  REQUIRE(status.ok());
  CHECK(status->tasks_size() == 0);
}

TEST_CASE("two programs that together exceed the GPU: the second's grow waits for the first",
          "[guard]") {
  auto mgbd = StartDaemon(1, 16 * kGiB);
  const std::string first =
      "'" + std::string(MGB_CLI) + "' run -- '" + GUARD_PROBE + "' alloc:12288 sleep:800 free";
  const std::string second =
      "'" + std::string(MGB_CLI) + "' run -- '" + GUARD_PROBE + "' sleep:300 alloc:12288 free";
  auto both = RunProcess({"/bin/sh", "-c", first + " & " + second + " & wait"}, Env(*mgbd));
  INFO(both.out << both.err);
  CHECK(both.exit_code == 0);
  std::string out = both.out;
  size_t count = 0;
  for (size_t at = out.find("alloc:12288 rc=0"); at != std::string::npos;
       at = out.find("alloc:12288 rc=0", at + 1)) {
    ++count;
  }
  CHECK(count == 2);
}

TEST_CASE(
    "a program killed while its grow waits frees everything; a forked child counts against "
    "the same run",
    "[guard]") {
  auto mgbd = StartDaemon(1, 16 * kGiB);
  // A holder takes 12 GiB; the victim's 8 GiB grow waits until it is killed.
  ProcessResult holder, victim;
  std::thread holding([&] {
    holder = RunProcess(Run({}, {GUARD_PROBE, "alloc:12288", "sleep:1500"}), Env(*mgbd));
  });
  REQUIRE(
      TaskWhen(*mgbd, [](const v1::TaskStatus &t) { return t.allocated_bytes() == 12 * kGiB; }));
  std::thread waiting([&] {
    victim =
        RunProcess({"/bin/sh", "-c", "exec \"$0\" run -- \"$1\" alloc:8192", MGB_CLI, GUARD_PROBE},
                   Env(*mgbd));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  RunProcess({"/bin/sh", "-c", "pkill -KILL -f 'guard_probe alloc:8192$'"});
  waiting.join();
  holding.join();
  CHECK(victim.exit_code == 128 + SIGKILL);
  CHECK(holder.exit_code == 0);
  auto after = Client::StatusAt(mgbd->socket);
  REQUIRE(after.ok());
  CHECK(after->gpus(0).memory_reserved_bytes() == 0);
  CHECK(after->tasks_size() == 0);

  auto forked = RunProcess(
      Run({"--max-mem", "1536M"}, {GUARD_PROBE, "alloc:1024", "fork:1024", "free", "fork:1024"}),
      Env(*mgbd));
  INFO(forked.out << forked.err);
  CHECK_THAT(forked.out, Catch::Contains("fork:1024 rc=2") && Catch::Contains("fork:1024 rc=0"));
}

TEST_CASE(
    "the guard outside mgb run forwards; a broken run directory refuses allocations (unguarded "
    "with MGB_UNMANAGED); RTLD_NEXT still means the caller's next",
    "[guard]") {
  const std::vector<std::string> env = {"LD_PRELOAD=" + std::string(GUARD_LIBRARY),
                                        "LD_LIBRARY_PATH=" + std::string(FAKE_DRIVER_DIR)};
  auto plain = RunProcess({GUARD_PROBE, "alloc:20000", "next"}, env);
  CHECK(plain.exit_code == 0);
  CHECK_THAT(plain.out, Catch::Contains("alloc:20000 rc=2") && Catch::Contains("next rc=0"));
  CHECK(plain.err.empty());
  auto env_broken = env;
  env_broken.push_back("MGB_GUARD_DIR=/nonexistent/mgb-run");
  // Fail closed (issue 32, item 10): the run promised counting, so nothing is allocated
  // uncounted; MGB_UNMANAGED=1 runs it unguarded, saying so.
  auto broken = RunProcess({GUARD_PROBE, "alloc:1024"}, env_broken);
  CHECK(broken.exit_code == 0);
  CHECK_THAT(broken.out, Catch::Contains("alloc:1024 rc=2"));
  CHECK_THAT(broken.err, Catch::Contains("/nonexistent/mgb-run/ledger") &&
                             Catch::Contains("allocations are refused"));
  env_broken.push_back("MGB_UNMANAGED=1");
  auto unmanaged = RunProcess({GUARD_PROBE, "alloc:1024"}, env_broken);
  CHECK_THAT(unmanaged.out, Catch::Contains("alloc:1024 rc=0"));
  CHECK_THAT(unmanaged.err, Catch::Contains("running unguarded"));
}

// Issue 33: two programs without a learned peak grew side by side on one GPU; mgbd refused the
// younger's grow as hopeless and it died of out-of-memory. With the first-run rule off (so that
// they do share), the refused allocation gets host memory and both finish; --no-spill keeps the
// old out-of-memory.
TEST_CASE("programs growing into each other's room: the refused allocation spills, none is lost",
          "[guard][spill]") {
  // A fresh mgbd each time: the second pair would start from the first's learned peaks, and wait.
  auto pair = [&](const std::string &flags) {
    auto mgbd = StartDaemonWith(1, 16 * kGiB, [](server::DaemonOptions &options) {
      options.context_reserve_bytes = 0;
      options.first_run_settle_ms = 0;
    });
    const std::string run = "'" + std::string(MGB_CLI) + "' run " + flags + " -- '" + GUARD_PROBE;
    const std::string a = run + "' alloc:6144 sleep:400 alloc:6144 sleep:600 free";
    const std::string b = run + "' sleep:150 alloc:6144 sleep:400 alloc:6144 sleep:600 free";
    ProcessResult result = RunProcess({"/bin/sh", "-c", a + " & " + b + " & wait"}, Env(*mgbd));
    auto after = Client::StatusAt(mgbd->socket);
    REQUIRE(after.ok());
    CHECK(after->gpus(0).memory_reserved_bytes() == 0);
    return result;
  };
  auto count = [](const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  const ProcessResult spilled = pair("");
  INFO(spilled.out << spilled.err);
  CHECK(count(spilled.out, "alloc:6144 rc=0") == 4);
  CHECK_THAT(spilled.err, Catch::Contains("in host memory"));
  const ProcessResult refused = pair("--no-spill");
  INFO(refused.out << refused.err);
  CHECK(count(refused.out, "alloc:6144 rc=0") == 3);
  CHECK(count(refused.out, "alloc:6144 rc=2") == 1);
}

TEST_CASE("mgb run --gpus 2: a task on each GPU, each GPU's allocations grow its own task",
          "[guard][gpus]") {
  auto mgbd = StartDaemonWith(2, 16 * kGiB, [](server::DaemonOptions &options) {
    // GPUs with PCI bus ids, as NVML's are: a task can be placed on one of them by name.
    const std::string file = std::filesystem::path(options.socket_path).parent_path() / "gpus.json";
    std::ofstream(file) << R"({"gpus": [)"
                        << R"({"name": "a", "memory_bytes": 17179869184, "sms": 132,)"
                        << R"( "pci_bus_id": "00000000:18:00.0"},)"
                        << R"({"name": "b", "memory_bytes": 17179869184, "sms": 132,)"
                        << R"( "pci_bus_id": "00000000:19:00.0"}]})";
    options.gpus_file = file;
  });
  const auto argv = Run({"--gpus", "2"}, {GUARD_PROBE, "visible", "alloc:2048", "device:1",
                                          "alloc:3072", "info", "sleep:1500", "free"});
  ProcessResult run;
  std::thread runner([&] { run = RunProcess(argv, Env(*mgbd)); });
  std::optional<v1::StatusReply> seen;
  WaitFor(
      [&] {
        auto status = Client::StatusAt(mgbd->socket);
        if (!status.ok() || status->tasks_size() != 2) return false;
        uint64_t on[2] = {0, 0};
        for (const auto &t : status->tasks()) on[t.gpu_index()] = t.allocated_bytes();
        if (on[0] != 2 * kGiB || on[1] != 3 * kGiB) return false;
        seen = *status;
        return true;
      },
      std::chrono::seconds(5));
  runner.join();
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("visible=0,1"));
  CHECK_THAT(run.out, Catch::Contains("alloc:2048 rc=0") && Catch::Contains("alloc:3072 rc=0"));
  REQUIRE(seen);
  for (const auto &t : seen->tasks()) {
    CHECK(t.memory_bytes() >= t.allocated_bytes());  // each grown on its own GPU
    CHECK_THAT(t.profile_key(), Catch::Contains(" of 2]"));
  }
  // Config GPUs without bus ids cannot be named: a clear refusal, not a wrong placement.
  auto plain = StartDaemon(2, 16 * kGiB);
  const ProcessResult refused = RunProcess(Run({"--gpus", "2"}, {GUARD_PROBE}), Env(*plain));
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err, Catch::Contains("PCI bus ids"));
  CHECK(RunProcess(Run({"--gpus", "9"}, {GUARD_PROBE}), Env(*plain)).exit_code == 2);
}

}  // namespace mgb::test
