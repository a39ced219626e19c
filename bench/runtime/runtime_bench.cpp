// libmgb overhead on the CPU side: libmgb over the fake CUDA seam against a real mgbd (spawned from
// this build), compared with the same operations made directly on the seam. Figures are per
// operation; see docs/runtime.md for results and the GPU counterpart (gpu_overhead.cu).
//
// usage: mgb_runtime_bench [--tasks N] [--ops N] [--help]
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_cuda.h"
#include "mgb.pb.h"
#include "runtime.h"

namespace {

using Clock = std::chrono::steady_clock;

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

struct Summary {
  double p50, p99, mean;
};

Summary Summarize(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  double sum = 0;
  for (double s : samples) sum += s;
  return {samples[samples.size() / 2], samples[samples.size() * 99 / 100], sum / samples.size()};
}

pid_t StartMgbd(const std::string &dir, const std::string &socket) {
  std::string config = dir + "/gpus.json";
  std::ofstream(config) << R"({"gpus": [{"name": "g0", "memory_bytes": 68719476736, "sms": 132},)"
                        << R"( {"name": "g1", "memory_bytes": 68719476736, "sms": 132}]})";
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    execl(MGB_BENCH_MGBD, "mgbd", "--socket", socket.c_str(), "--gpus", config.c_str(),
          "--context-reserve", "0", static_cast<char *>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 500; ++i) {
    if (mgb::Client::StatusAt(socket, std::chrono::milliseconds(100)).ok()) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::fprintf(stderr, "mgb_runtime_bench: mgbd did not start on %s\n", socket.c_str());
  std::exit(1);
}

void Print(const char *what, const Summary &s) {
  std::printf("%-52s p50 %8.2f us  p99 %8.2f us  mean %8.2f us\n", what, s.p50, s.p99, s.mean);
}

}  // namespace

int main(int argc, char **argv) {
  int tasks = 2000, ops = 1000;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help") {
      std::printf(
          "usage: mgb_runtime_bench [--tasks N] [--ops N]\n"
          "Measures libmgb's per-task and per-lazy-operation overhead over a fake CUDA "
          "seam against a real mgbd.\n");
      return 0;
    } else if (arg == "--tasks" && i + 1 < argc) {
      tasks = std::atoi(argv[++i]);
    } else if (arg == "--ops" && i + 1 < argc) {
      ops = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "mgb_runtime_bench: unknown argument '%s' (see --help)\n", arg.c_str());
      return 2;
    }
  }
  if (tasks < 10 || ops < 10) {
    std::fprintf(stderr, "mgb_runtime_bench: --tasks and --ops must be at least 10\n");
    return 2;
  }
  char pattern[] = "/tmp/mgb-runtime-bench.XXXXXX";
  if (mkdtemp(pattern) == nullptr) {
    std::perror("mgb_runtime_bench: mkdtemp /tmp/mgb-runtime-bench.XXXXXX");
    return 1;
  }
  const std::string dir = pattern;
  std::string socket = dir + "/mgbd.sock";
  pid_t mgbd = StartMgbd(dir, socket);

  mgb::test::FakeCudaApi fake(2);
  mgb::runtime::SessionConfig config;
  config.socket_path = socket;
  mgb::runtime::Runtime rt(fake, config);
  rt.Managed();
  const mgb_dim3 grid{1024, 1, 1}, block{256, 1, 1};

  // 1. A task: probe -> placement -> device selected -> end (sync + release).
  std::vector<double> task_us;
  for (int i = 0; i < tasks; ++i) {
    auto start = Clock::now();
    mgb_task task = rt.TaskBegin(1 << 20, grid, block, nullptr, "bench");
    rt.TaskEnd(task);
    task_us.push_back(Micros(Clock::now() - start));
  }
  // The same work without libmgb: the device selection and synchronisation alone.
  std::vector<double> bare_us;
  for (int i = 0; i < tasks; ++i) {
    auto start = Clock::now();
    fake.SetDevice(i % 2);
    fake.DeviceSynchronize();
    bare_us.push_back(Micros(Clock::now() - start));
  }
  // A guarded allocation inside a task (fits the reservation; reports usage to mgbd).
  std::vector<double> guarded_us, direct_malloc_us;
  mgb_task task = rt.TaskBegin(size_t{1} << 30, grid, block, nullptr, "bench");
  for (int i = 0; i < ops; ++i) {
    void *p;
    auto start = Clock::now();
    rt.Malloc(&p, 4096);
    rt.Free(p);
    guarded_us.push_back(Micros(Clock::now() - start));
    start = Clock::now();
    fake.Malloc(&p, 4096);
    fake.Free(p);
    direct_malloc_us.push_back(Micros(Clock::now() - start));
  }
  rt.TaskEnd(task);

  // 2. Lazy operations: record `ops` 4 KiB host-to-device copies, then one prepare replays them.
  std::vector<unsigned char> host(4096, 7);
  void *standin;
  rt.Malloc(&standin, host.size() * ops);
  auto start = Clock::now();
  for (int i = 0; i < ops; ++i) {
    rt.Memcpy(static_cast<char *>(standin) + i * host.size(), host.data(), host.size(),
              cudaMemcpyHostToDevice, std::nullopt);
  }
  double record_us = Micros(Clock::now() - start) / ops;
  const void *args[] = {&standin};
  const size_t sizes[] = {sizeof standin};
  start = Clock::now();
  rt.LaunchPrepare(grid, block, nullptr, "bench", 1, args, sizes);
  double prepare_us = Micros(Clock::now() - start);
  void *real;
  fake.Malloc(&real, host.size() * ops);
  start = Clock::now();
  for (int i = 0; i < ops; ++i) {
    fake.Memcpy(static_cast<char *>(real) + i * host.size(), host.data(), host.size(),
                cudaMemcpyHostToDevice);
  }
  double direct_copy_us = Micros(Clock::now() - start) / ops;
  fake.Free(real);
  // Ops on a bound stand-in run at once, translated.
  start = Clock::now();
  for (int i = 0; i < ops; ++i) {
    rt.Memcpy(static_cast<char *>(standin) + i * host.size(), host.data(), host.size(),
              cudaMemcpyHostToDevice, std::nullopt);
  }
  double bound_copy_us = Micros(Clock::now() - start) / ops;
  rt.Free(standin);

  std::printf(
      "libmgb CPU overhead (fake CUDA seam, real mgbd over a Unix socket), %d tasks, %d "
      "ops\n",
      tasks, ops);
  Print("task begin->placement->end (2 RPCs)", Summarize(task_us));
  Print("same without libmgb (SetDevice + DeviceSynchronize)", Summarize(bare_us));
  Print("guarded cudaMalloc+cudaFree in a task (async usage)", Summarize(guarded_us));
  Print("direct cudaMalloc+cudaFree on the seam", Summarize(direct_malloc_us));
  std::printf("%-52s %8.2f us/op\n", "lazy 4 KiB H2D copy: record (capture bytes)", record_us);
  std::printf("%-52s %8.2f us/op (incl. TaskBegin RPC: %.1f us total)\n",
              "lazy 4 KiB H2D copy: replay at prepare", prepare_us / ops, prepare_us);
  std::printf("%-52s %8.2f us/op\n", "copy on a bound stand-in (translated at once)",
              bound_copy_us);
  std::printf("%-52s %8.2f us/op\n", "direct copy on the seam", direct_copy_us);

  rt.Shutdown();
  kill(mgbd, SIGTERM);
  waitpid(mgbd, nullptr, 0);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // the benchmark leaves nothing behind
  if (ec)
    std::fprintf(stderr, "mgb_runtime_bench: cannot remove %s: %s\n", dir.c_str(),
                 ec.message().c_str());
  return ec ? 1 : 0;
}
