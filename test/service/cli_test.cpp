// mgbd and mgb as processes: --help and bad flags, socket handling, `mgb status --json`,
// `mgb run` with a config-GPU mgbd.
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <thread>
#include <nlohmann/json.hpp>

#include "mgb.pb.h"
#include "mgb/client.h"
#include "test_support.h"

namespace mgb::test {
namespace {

// mgbd as a child process on dir/mgbd.sock; SIGTERM and reaped when the object dies.
struct MgbdProcess {
  TempDir dir;
  std::string socket = dir.File("mgbd.sock");
  int pid = -1;
  explicit MgbdProcess(int gpus = 2) { Start(gpus); }
  void Start(int gpus) {
    pid = StartProcess({MGB_MGBD, "--socket", socket, "--gpus",
                        WriteGpuConfig(dir, gpus, 16 * kGiB), "--context-reserve", "0"});
    WaitFor([&] { return Client::StatusAt(socket, std::chrono::milliseconds(100)).ok(); },
            std::chrono::seconds(5));
  }
  int Stop(int sig = SIGTERM) {
    kill(pid, sig);
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ~MgbdProcess() {
    if (pid > 0) Stop();
  }
};

}  // namespace

TEST_CASE("--help and bad flags: exit codes and messages", "[cli]") {
  for (const std::vector<std::string> &version : {std::vector<std::string>{MGB_MGBD, "--version"},
                                                  {MGB_CLI, "--version"},
                                                  {MGB_CLI, "status", "--version"}}) {
    auto printed = RunProcess(version);
    CHECK(printed.exit_code == 0);
    CHECK_THAT(printed.out, Catch::Matches("(mgbd|mgb|mgb status) [0-9]+\\.[0-9]+\\.[0-9]+\n"));
  }
  auto help = RunProcess({MGB_MGBD, "--help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("--socket") && Catch::Contains("--policy"));
  CHECK(RunProcess({MGB_MGBD, "--bogus"}).exit_code == 2);
  CHECK(RunProcess({MGB_MGBD}).exit_code == 2);  // --socket is required
  CHECK(RunProcess({MGB_CLI, "--help"}).exit_code == 0);
  CHECK(RunProcess({MGB_CLI}).exit_code == 2);
  CHECK(RunProcess({MGB_CLI, "frobnicate"}).exit_code == 2);
  for (const char *command : {"status", "run", "watch"}) {
    auto sub = RunProcess({MGB_CLI, command, "--help"});
    CHECK(sub.exit_code == 0);
    CHECK_THAT(sub.out, Catch::Contains(std::string("mgb ") + command));
    CHECK(RunProcess({MGB_CLI, command, "--bogus"}).exit_code == 2);
  }
  CHECK(RunProcess({MGB_CLI, "run", "--mem", "2G", "--max-mem", "1G", "--", "true"}).exit_code ==
        2);
  CHECK(RunProcess({MGB_CLI, "run", "--mem", "1G"}).exit_code == 2);  // no program
  CHECK(RunProcess({MGB_CLI, "run", "--mem", "lots", "--", "true"}).exit_code == 2);
  TempDir dir;
  auto absent = RunProcess({MGB_CLI, "status", "--socket", dir.File("none.sock")});
  CHECK(absent.exit_code == 1);
  CHECK_THAT(absent.err, Catch::Contains("none.sock"));
}

TEST_CASE("mgbd start-up errors name the flag or file", "[cli]") {
  TempDir dir;
  const std::string gpus = WriteGpuConfig(dir, 1, kGiB);
  {
    std::ofstream bad(dir.File("bad.json"));
    bad << R"({"gpus": [{"name": "g0", "sms": 4}]})";
  }
  auto bad_file = RunProcess({MGB_MGBD, "--socket", dir.File("s"), "--gpus", dir.File("bad.json")});
  CHECK(bad_file.exit_code == 1);
  CHECK_THAT(bad_file.err, Catch::Contains("bad.json") && Catch::Contains("memory_bytes"));
  auto bad_policy =
      RunProcess({MGB_MGBD, "--socket", dir.File("s"), "--gpus", gpus, "--policy", "x"});
  CHECK(bad_policy.exit_code == 1);
  CHECK_THAT(bad_policy.err, Catch::Contains("--policy"));
  auto bound_elsewhere = RunProcess({MGB_MGBD, "--socket", dir.File("s"), "--gpus", gpus,
                                     "--policy", "memory", "--max-slowdown", "5"});
  CHECK(bound_elsewhere.exit_code == 2);
  CHECK_THAT(bound_elsewhere.err, Catch::Contains("--max-slowdown works with --policy mgb only"));
  auto bound_negative =
      RunProcess({MGB_MGBD, "--socket", dir.File("s"), "--gpus", gpus, "--max-slowdown", "-1"});
  CHECK(bound_negative.exit_code == 2);
  CHECK_THAT(bound_negative.err, Catch::Contains("--max-slowdown"));
  auto no_dir = RunProcess({MGB_MGBD, "--socket", dir.File("no/such/dir.sock"), "--gpus", gpus});
  CHECK(no_dir.exit_code == 1);
  CHECK_THAT(no_dir.err, Catch::Contains("does not exist"));
  std::ofstream(dir.File("regular")) << "x";
  auto not_socket = RunProcess({MGB_MGBD, "--socket", dir.File("regular"), "--gpus", gpus});
  CHECK(not_socket.exit_code == 1);
  CHECK_THAT(not_socket.err, Catch::Contains("not a socket"));
  if (access("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", F_OK) != 0) {
    auto no_nvml = RunProcess({MGB_MGBD, "--socket", dir.File("s")});
    CHECK(no_nvml.exit_code == 1);
    CHECK_THAT(no_nvml.err, Catch::Contains("libnvidia-ml.so.1") && Catch::Contains("--gpus"));
  }
}

TEST_CASE("mgbd's socket: 0660, a second mgbd refused, stale socket replaced, removed on SIGTERM",
          "[cli]") {
  MgbdProcess mgbd;
  struct stat st {};
  REQUIRE(stat(mgbd.socket.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0660);
  auto second =
      RunProcess({MGB_MGBD, "--socket", mgbd.socket, "--gpus", mgbd.dir.File("gpus.json")});
  CHECK(second.exit_code == 1);
  CHECK_THAT(second.err, Catch::Contains("already listening"));
  CHECK(mgbd.Stop(SIGKILL) == 128 + SIGKILL);  // leaves a stale socket file behind
  REQUIRE(access(mgbd.socket.c_str(), F_OK) == 0);
  mgbd.Start(2);
  CHECK(Client::StatusAt(mgbd.socket).ok());
  CHECK(mgbd.Stop(SIGTERM) == 0);
  CHECK(access(mgbd.socket.c_str(), F_OK) != 0);
}

TEST_CASE("mgb status --json: integers for bytes and counts", "[cli]") {
  MgbdProcess mgbd;
  auto out = RunProcess({MGB_CLI, "status", "--json", "--socket", mgbd.socket});
  REQUIRE(out.exit_code == 0);
  auto doc = nlohmann::json::parse(out.out);
  REQUIRE(doc["gpus"].size() == 2);
  for (const char *field : {"memory_total_bytes", "memory_reserved_bytes", "memory_used_bytes",
                            "memory_available_bytes", "warps_in_use", "tasks"}) {
    INFO(field);
    CHECK(doc["gpus"][0][field].is_number_integer());
  }
  CHECK(doc["gpus"][0]["memory_total_bytes"] == 16 * kGiB);
  CHECK(doc["gpus"][1]["name"] == "g1");
  CHECK(doc["waiting"].is_number_integer());
  CHECK(doc["policy"] == "mgb");
  auto table = RunProcess({MGB_CLI, "status"}, {"MGB_SOCKET=" + mgbd.socket});
  CHECK(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("16.00 GiB") && Catch::Contains("g1"));
}

TEST_CASE("mgb status lists running tasks (reserved, allocated, age) and waiting ones", "[cli]") {
  MgbdProcess mgbd(1);
  auto holder = Client::Connect(mgbd.socket, getpid(), "/opt/app/bin/trainer");
  REQUIRE(holder.ok());
  auto held = (*holder)->TaskBegin(10 * kGiB, LaunchShape{{64, 1, 1}, {256, 1, 1}}, "epoch-1");
  REQUIRE(held.ok());
  REQUIRE((*holder)->TaskUsage(held->task_id, 3 * kGiB).ok());
  auto waiter = Client::Connect(mgbd.socket, getpid(), "solver");
  REQUIRE(waiter.ok());
  std::thread waiting([&] {  // 8 GiB does not fit beside 10 GiB on the 16 GiB GPU: it waits
    (void)(*waiter)->TaskBegin(8 * kGiB, LaunchShape{}, "big-step",
                               std::chrono::system_clock::now() + std::chrono::milliseconds(1500));
  });
  WaitFor(
      [&] {
        auto st = Client::StatusAt(mgbd.socket);
        return st.ok() && st->waiting_size() == 1;
      },
      std::chrono::seconds(1));
  auto table = RunProcess({MGB_CLI, "status", "--socket", mgbd.socket});
  auto json = RunProcess({MGB_CLI, "status", "--json", "--socket", mgbd.socket});
  waiting.join();
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("running:") && Catch::Contains("ALLOCATED") &&
                            Catch::Contains("trainer") && Catch::Contains("epoch-1") &&
                            Catch::Contains("10.00 GiB") && Catch::Contains("3.00 GiB"));
  CHECK_THAT(table.out, Catch::Contains("waiting (oldest first):") && Catch::Contains("solver") &&
                            Catch::Contains("big-step") && Catch::Contains("8.00 GiB"));
  CHECK_THAT(table.out, Catch::Matches("(.|\n)*[0-9] (ms|s)\n(.|\n)*"));  // ages
  REQUIRE(json.exit_code == 0);
  auto doc = nlohmann::json::parse(json.out);
  REQUIRE(doc["running_tasks"].size() == 1);
  CHECK(doc["running_tasks"][0]["allocated_bytes"] == 3 * kGiB);
  // The user is the kernel's (SO_PEERCRED): this test's own.
  const passwd *me = getpwuid(getuid());
  REQUIRE(me != nullptr);
  CHECK(doc["running_tasks"][0]["user"] == std::string(me->pw_name));
  CHECK_THAT(table.out, Catch::Contains(std::string(" ") + me->pw_name + " "));
  CHECK(doc["running_tasks"][0]["memory_bytes"] == 10 * kGiB);
  CHECK(doc["running_tasks"][0]["gpu_index"].is_number_integer());
  REQUIRE(doc["waiting_tasks"].size() == 1);
  CHECK(doc["waiting_tasks"][0]["label"] == "big-step");
  CHECK(doc["waiting_tasks"][0]["gpu_index"].is_null());  // no GPU yet
}

// Issue 32, item 7: a label's ESC sequence or newline reached the operator's terminal raw.
TEST_CASE("mgb status prints labels and program names inert", "[cli][hostile]") {
  MgbdProcess mgbd(1);
  auto client = Client::Connect(mgbd.socket, getpid(), "evil\x1b]0;pwned\x07");
  REQUIRE(client.ok());
  auto held = (*client)->TaskBegin(kGiB, LaunchShape{}, "a\n999 0 forged\x1b[2J\u202e");
  REQUIRE(held.ok());
  auto table = RunProcess({MGB_CLI, "status", "--socket", mgbd.socket});
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find('\x1b') == std::string::npos);
  CHECK(table.out.find('\x07') == std::string::npos);
  CHECK(table.out.find("\u202e") == std::string::npos);
  CHECK(table.out.find("\n999 0 forged") == std::string::npos);  // no forged row
  CHECK_THAT(table.out, Catch::Contains("~forged\\x1b[2J\\u202e") &&
                            Catch::Contains("evil\\x1b]0;pwned\\x07"));
}

TEST_CASE("mgb run: the program sees its GPU, its exit status comes back, the GPU is released",
          "[cli]") {
  MgbdProcess mgbd;
  const std::vector<std::string> env = {"MGB_SOCKET=" + mgbd.socket};
  auto run = RunProcess({MGB_CLI, "run", "--mem", "10G", "--", "/bin/sh", "-c",
                         "echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES; exit 7"},
                        env);
  CHECK(run.exit_code == 7);
  CHECK_THAT(run.out, Catch::Contains("CUDA_VISIBLE_DEVICES=0"));
  // Two at once that do not fit one GPU land on different GPUs.
  auto both = RunProcess(
      {"/bin/sh", "-c",
       std::string(MGB_CLI) +
           " run --mem 10G -- /bin/sh -c 'sleep 0.3; echo A=$CUDA_VISIBLE_DEVICES' & " + MGB_CLI +
           " run --mem 10G -- /bin/sh -c 'sleep 0.3; echo B=$CUDA_VISIBLE_DEVICES' & wait"},
      env);
  CHECK_THAT(both.out, (Catch::Contains("A=0") && Catch::Contains("B=1")) ||
                           (Catch::Contains("A=1") && Catch::Contains("B=0")));
  auto too_big = RunProcess({MGB_CLI, "run", "--mem", "20G", "--", "true"}, env);
  CHECK(too_big.exit_code == 1);
  CHECK_THAT(too_big.err, Catch::Contains("memory_bytes"));
  CHECK_THAT(too_big.err, Catch::Contains("GiB"));  // sizes for people beside the bytes
  CHECK(RunProcess({MGB_CLI, "run", "--mem", "1G", "--", "/no/such/program"}, env).exit_code ==
        127);
  auto s = Client::StatusAt(mgbd.socket);
  REQUIRE(s.ok());
  CHECK(s->gpus(0).memory_reserved_bytes() == 0);
  CHECK(s->gpus(1).memory_reserved_bytes() == 0);
}

TEST_CASE("mgb watch prints the events of a run", "[cli]") {
  MgbdProcess mgbd;
  ProcessResult watch;
  std::thread watcher([&] {
    watch = RunProcess({MGB_CLI, "watch", "--count", "2", "--socket", mgbd.socket});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the watch stream is open
  CHECK(RunProcess({MGB_CLI, "run", "--mem", "1G", "--socket", mgbd.socket, "--", "true"})
            .exit_code == 0);
  watcher.join();
  CHECK(watch.exit_code == 0);
  CHECK_THAT(watch.out, Catch::Contains("session-opened") && Catch::Contains("task-placed") &&
                            Catch::Contains("1.00 GiB"));
  CHECK_THAT(watch.out, Catch::Contains(" task 0 gpu -1 "));  // a session's event: no GPU
}

TEST_CASE("mgbd --verbose 1 logs each decision with its time", "[cli]") {
  TempDir dir;
  const std::string log = dir.File("mgbd.log");
  const auto unix_now = [] {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const double before = unix_now();
  // mgbd in the background with its stderr in a file, one `mgb run`, then SIGTERM.
  auto script = RunProcess(
      {"/bin/sh", "-c",
       "\"$0\" --socket \"$2\" --gpus \"$3\" --context-reserve 0 --verbose 1 2>\"$4\" & m=$!; i=0; "
       "until \"$1\" status --socket \"$2\" >/dev/null 2>&1 || [ $i -ge 50 ]; do sleep 0.1; "
       "i=$((i+1)); done; "
       "\"$1\" run --mem 1G --socket \"$2\" -- true; r=$?; kill $m; wait $m; exit $r",
       MGB_MGBD, MGB_CLI, dir.File("mgbd.sock"), WriteGpuConfig(dir, 1, 16 * kGiB), log});
  const double after = unix_now();
  REQUIRE(script.exit_code == 0);
  std::ifstream in(log);
  std::string line, placed;
  while (std::getline(in, line)) {
    if (line.find(" task-placed ") != std::string::npos) placed = line;
  }
  INFO(placed);
  double at = 0;
  char kind[32] = {};
  REQUIRE(std::sscanf(placed.c_str(), "mgbd: %lf %31s", &at, kind) == 2);
  CHECK(std::string(kind) == "task-placed");  // as `mgb watch` names it
  CHECK(at >= before - 1);
  CHECK(at <= after + 1);
  CHECK_THAT(placed, Catch::Contains("gpu 0 memory 1073741824") && Catch::EndsWith("reason none"));
}

TEST_CASE("mgb run forwards SIGTERM to the program and releases its GPU", "[cli]") {
  MgbdProcess mgbd;
  const int pid =
      StartProcess({MGB_CLI, "run", "--mem", "1G", "--socket", mgbd.socket, "--", "/bin/sh", "-c",
                    "trap 'exit 42' TERM; while :; do sleep 0.05; done"});
  auto running = [&] {
    auto s = Client::StatusAt(mgbd.socket);
    return s.ok() && s->tasks_size() == 1;
  };
  WaitFor(running, std::chrono::seconds(5));
  REQUIRE(running());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the shell set its trap
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 42);
  auto s = Client::StatusAt(mgbd.socket);
  REQUIRE(s.ok());
  CHECK(s->tasks_size() == 0);
}

// Issue 32, item 9: SIGKILLed, `mgb run` lost its session (mgbd freed the grant at once) while
// its program ran on with the memory, and another run was granted the same memory.
TEST_CASE("a program does not outlive its SIGKILLed mgb run", "[cli][hostile]") {
  MgbdProcess mgbd;
  TempDir dir;
  const std::string child_pid = dir.File("child.pid");
  const int pid = StartProcess({MGB_CLI, "run", "--mem", "1G", "--socket", mgbd.socket, "--",
                                "/bin/sh", "-c", "echo $$ > '" + child_pid + "'; exec sleep 30"});
  REQUIRE(WaitFor([&] { return !ReadFile(child_pid).empty(); }, std::chrono::seconds(5)) <
          std::chrono::seconds(5));
  const int program = std::stoi(ReadFile(child_pid));
  REQUIRE(kill(program, 0) == 0);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  // Gone (or a zombie of init's, already dead) within a second.
  CHECK(WaitFor(
            [&] {
              const std::string stat = ReadFile("/proc/" + std::to_string(program) + "/stat");
              return stat.empty() || stat.find(") Z ") != std::string::npos;
            },
            std::chrono::seconds(2)) < std::chrono::seconds(1));
}

}  // namespace mgb::test

namespace mgb::test {
namespace {

// setenv for the scope of one test: mgbd and mgb, started from here, inherit it.
struct ScopedEnv {
  std::string name;
  ScopedEnv(std::string n, const std::string &value) : name(std::move(n)) {
    setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

// The fake NVML library (test/service/CMakeLists.txt: fake_nvml).
std::string FakeNvmlPath() { return MGB_FAKE_NVML; }

}  // namespace

TEST_CASE("mgb run reports its program's NVML memory to mgbd (TaskUsage)", "[cli][nvml]") {
  TempDir dir;
  const std::string procs = dir.File("procs");
  std::ofstream(procs).close();
  const std::string fake = FakeNvmlPath();
  INFO("fake NVML library: " << fake << " (build the fake_nvml target)");
  REQUIRE(access(fake.c_str(), R_OK) == 0);
  ScopedEnv library("MGB_NVML_LIBRARY", fake), gpus("MGB_FAKE_NVML_GPUS", "1"),
      listing("MGB_FAKE_NVML_PROCS", procs);
  const std::string socket = dir.File("mgbd.sock");
  const int mgbd = StartProcess({MGB_MGBD, "--socket", socket, "--context-reserve", "0"});
  WaitFor([&] { return Client::StatusAt(socket, std::chrono::milliseconds(100)).ok(); },
          std::chrono::seconds(5));
  // The program's grandchild holds 4 GiB of its 10 GiB grant (the fake lists it by pid).
  const int run =
      StartProcess({MGB_CLI, "run", "--mem", "10G", "--socket", socket, "--", "/bin/sh", "-c",
                    "/bin/sh -c 'echo 0 $$ 4294967296 >> " + procs +
                        "; sleep 4' & wait"});  // outlives the 2 s wait below
  // NVML sees 4 GiB used on the 80 GiB fake GPU. Unreported, mgbd would count the grant's 10 GiB
  // on top (66 GiB available); reported, only the 6 GiB not yet allocated (70 GiB).
  auto counted_once = [&] {
    auto s = Client::StatusAt(socket);
    return s.ok() && s->gpus_size() == 1 && s->tasks_size() == 1 &&
           s->gpus(0).memory_used_bytes() == 4 * kGiB &&
           s->gpus(0).memory_available_bytes() == 70 * kGiB;
  };
  WaitFor(counted_once, std::chrono::seconds(2));  // mgb run reads every 0.5 s
  auto s = Client::StatusAt(socket);
  REQUIRE(s.ok());
  REQUIRE(s->gpus_size() == 1);
  CHECK(s->gpus(0).memory_used_bytes() == 4 * kGiB);
  CHECK(s->gpus(0).memory_available_bytes() == 70 * kGiB);
  int status = 0;
  waitpid(run, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  kill(mgbd, SIGTERM);
  waitpid(mgbd, &status, 0);
}

TEST_CASE("mgbd re-reads NVML while only a grow waits, and fails a grow NVML shows cannot come",
          "[cli][nvml][grow]") {
  TempDir dir;
  const std::string procs = dir.File("procs");
  std::ofstream(procs).close();
  ScopedEnv library("MGB_NVML_LIBRARY", FakeNvmlPath()), gpus("MGB_FAKE_NVML_GPUS", "1"),
      listing("MGB_FAKE_NVML_PROCS", procs);
  const std::string socket = dir.File("mgbd.sock");
  const int mgbd = StartProcess({MGB_MGBD, "--socket", socket, "--context-reserve", "0"});
  WaitFor([&] { return Client::StatusAt(socket, std::chrono::milliseconds(100)).ok(); },
          std::chrono::seconds(5));
  auto client = Client::Connect(socket, getpid(), "grower");
  REQUIRE(client.ok());
  auto task = (*client)->TaskBegin(10 * kGiB, LaunchShape{}, "grower");
  REQUIRE(task.ok());
  REQUIRE((*client)->TaskUsage(task->task_id, 10 * kGiB).ok());
  // The fake GPU (80 GiB) shows 79 GiB used: memory mgbd's accounting does not know of.
  auto nvml_used = [&](uint64_t bytes) {
    std::ofstream(procs) << "0 " << getpid() << " " << bytes << "\n";
  };
  nvml_used(79 * kGiB);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // A grow of 5 GiB waits (1 GiB free by NVML); no task waits, only the grow. Freeing memory
  // outside mgbd must reach it through NVML polling alone.
  std::thread freer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    nvml_used(10 * kGiB);
  });
  const auto start = std::chrono::steady_clock::now();
  auto grown = (*client)->TaskGrow(
      task->task_id, 5 * kGiB, std::chrono::system_clock::now() + std::chrono::milliseconds(2500));
  freer.join();
  CHECK(grown.ok());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(2000));
  // Now NVML shows the GPU full again and nothing else runs there: no end can ever make room.
  // Once NVML has settled (3 s after the last change) the grow fails instead of waiting forever.
  nvml_used(79 * kGiB);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // past mgbd's 5 ms NVML refresh
  const auto again = std::chrono::steady_clock::now();
  auto hopeless = (*client)->TaskGrow(task->task_id, 10 * kGiB,
                                      std::chrono::system_clock::now() + std::chrono::seconds(10));
  REQUIRE_FALSE(hopeless.ok());
  CHECK(hopeless.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(ReasonOf(hopeless.status()) == ErrorReason::kNoRoom);
  CHECK(std::chrono::steady_clock::now() - again < std::chrono::seconds(6));
  client->reset();
  int status = 0;
  kill(mgbd, SIGTERM);
  waitpid(mgbd, &status, 0);
}

}  // namespace mgb::test
