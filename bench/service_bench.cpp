// mgb_service_bench: the scheduler's speed and memory, measured (results in docs/service.md).
//   core:    decisions per second of core::Scheduler alone (64 H200-sized GPUs), and the cost of
//            a release event with 10,000 tasks waiting that cannot fit
//   grpc:    TaskBegin+TaskEnd round trip p50/p99 with 1 and 64 concurrent clients against a
//            real mgbd process over its Unix socket, and decisions per second through gRPC
//   waiting: mgbd's resident memory per parked TaskBegin with 10,000 waiting, and how long the
//            release that lets them all in takes to answer them all
#include <grpcpp/create_channel.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>

#include "flags.h"
#include "mgb.grpc.pb.h"
#include "mgb/client.h"
#include "mgb/core/scheduler.h"

extern char **environ;

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30;
constexpr uint64_t kH200 = 143771 * kMiB;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

struct NullSink : mgb::core::EventSink {
  void OnEvent(const mgb::core::Event &) override {}
};

std::vector<mgb::core::GpuSpec> H200s(int n) {
  std::vector<mgb::core::GpuSpec> gpus(n);
  for (int i = 0; i < n; ++i) {
    gpus[i].name = "h200-" + std::to_string(i);
    gpus[i].memory_bytes = kH200;
    gpus[i].sms = 132;
  }
  return gpus;
}

mgb::core::TaskRequest Request(uint64_t bytes, uint32_t blocks) {
  mgb::core::TaskRequest r;
  r.memory_bytes = bytes;
  r.shape.grid.x = blocks;
  r.shape.block.x = 256;
  return r;
}

void BenchCore(const std::string &policy_name, int decisions_wanted) {
  NullSink sink;
  auto policy = mgb::core::ParsePolicy(policy_name);
  auto s = std::move(*mgb::core::Scheduler::Create(H200s(64), {*policy, 520 * kMiB}, &sink));
  std::mt19937_64 rng(1);
  std::vector<mgb::core::SessionId> sessions;
  for (int i = 0; i < 512; ++i) sessions.push_back(s->OpenSession(i, "bench", 0));
  // Each session keeps one task in flight (running or waiting); ending one begins the next, so
  // the GPUs stay full and releases place waiters.
  std::vector<std::pair<mgb::core::SessionId, mgb::core::TaskId>> live;
  mgb::core::Micros now = 0;
  const auto start = Clock::now();
  for (auto session : sessions) {
    auto r = s->TaskBegin(session, Request((1 + rng() % 40) * kGiB, 1 + rng() % 2048), ++now);
    live.emplace_back(session, r->task);
  }
  while (s->decisions() < static_cast<uint64_t>(decisions_wanted)) {
    const size_t i = rng() % live.size();
    (void)s->TaskEnd(live[i].first, live[i].second, ++now);
    auto r = s->TaskBegin(live[i].first, Request((1 + rng() % 40) * kGiB, 1 + rng() % 2048), ++now);
    live[i].second = r->task;
  }
  const double secs = Seconds(Clock::now() - start);
  std::printf("core %-7s 64 GPUs, 512 sessions: %llu decisions in %.3f s = %.0f decisions/s\n",
              policy_name.c_str(), static_cast<unsigned long long>(s->decisions()), secs,
              static_cast<double>(s->decisions()) / secs);
}

void BenchCoreLongQueue() {
  NullSink sink;
  auto s = std::move(*mgb::core::Scheduler::Create(H200s(64), {{}, 0}, &sink));
  const auto session = s->OpenSession(1, "bench", 0);
  std::vector<mgb::core::TaskId> small;
  // One large task per GPU (fewest warps spreads them), then one 2 GB task on each: all full.
  for (int g = 0; g < 64; ++g) (void)s->TaskBegin(session, Request(kH200 - 2 * kGiB, 1), 0);
  for (int g = 0; g < 64; ++g) small.push_back(s->TaskBegin(session, Request(2 * kGiB, 1), 0)->task);
  for (int i = 0; i < 10000; ++i) (void)s->TaskBegin(session, Request(100 * kGiB, 1), 0);
  // Each event frees 2 GB and takes it again: no waiter fits, the queue is 10,000 long.
  const int events = 20000;
  const auto start = Clock::now();
  for (int i = 0; i < events; ++i) {
    // GPU 0 is the one the queue head reserved: releases elsewhere are what backfilling sees.
    auto &t = small[1 + static_cast<size_t>(i) % (small.size() - 1)];
    (void)s->TaskEnd(session, t, i);
    t = s->TaskBegin(session, Request(2 * kGiB, 1), i)->task;
  }
  const double us = Micros(Clock::now() - start) / events;
  std::printf("core mgb     10,000 waiting: %.2f us per release+begin event (%zu still waiting)\n",
              us, s->waiting_count());
}

// ---- mgbd as a process ----------------------------------------------------------------------

struct Mgbd {
  int pid = -1;
  std::string socket, config;
  Mgbd(const std::string &binary, int gpus) {
    char dir[] = "/tmp/mgb-bench-XXXXXX";
    socket = std::string(mkdtemp(dir)) + "/mgbd.sock";
    config = std::string(dir) + "/gpus.json";
    std::ofstream out(config);
    out << "{\"gpus\": [";
    for (int i = 0; i < gpus; ++i) {
      out << (i ? "," : "") << "{\"name\": \"g" << i << "\", \"memory_bytes\": " << kH200
          << ", \"sms\": 132}";
    }
    out << "]}";
    out.close();
    std::vector<std::string> args = {binary, "--socket", socket, "--gpus", config,
                                     "--context-reserve", "0"};
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
      std::fprintf(stderr, "cannot start %s\n", binary.c_str());
      std::exit(1);
    }
    for (int i = 0; i < 500 && !mgb::Client::StatusAt(socket, std::chrono::milliseconds(50)).ok(); ++i) {
    }
  }
  long RssKiB() const {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    }
    return -1;
  }
  ~Mgbd() {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
  }
};

void BenchRoundTrip(const std::string &mgbd_binary, int clients, int iterations) {
  Mgbd mgbd(mgbd_binary, 4);
  std::vector<std::vector<double>> latencies(clients);
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      auto client = std::move(*mgb::Client::Connect(mgbd.socket, getpid(), "bench"));
      mgb::LaunchShape shape{{64, 1, 1}, {256, 1, 1}};
      ++ready;
      while (!go) std::this_thread::yield();
      for (int i = 0; i < iterations; ++i) {
        const auto t0 = Clock::now();
        auto placed = client->TaskBegin(kGiB, shape, "bench");
        if (!placed.ok() || !client->TaskEnd(placed->task_id).ok()) std::abort();
        latencies[c].push_back(Micros(Clock::now() - t0));
      }
    });
  }
  while (ready < clients) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto start = Clock::now();
  go = true;
  for (auto &t : threads) t.join();
  const double secs = Seconds(Clock::now() - start);
  std::vector<double> all;
  for (auto &l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::printf("grpc %2d client%s: TaskBegin+TaskEnd p50 %.0f us, p99 %.0f us; %zu decisions in "
              "%.2f s = %.0f decisions/s\n",
              clients, clients == 1 ? " " : "s", Percentile(all, 0.50), Percentile(all, 0.99),
              all.size(), secs, static_cast<double>(all.size()) / secs);
}

void BenchWaiting(const std::string &mgbd_binary, int waiting) {
  Mgbd mgbd(mgbd_binary, 1);
  auto client = std::move(*mgb::Client::Connect(mgbd.socket, getpid(), "bench"));
  auto blocker = client->TaskBegin(kH200, mgb::LaunchShape{}, "all");
  if (!blocker.ok()) std::abort();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const long before = mgbd.RssKiB();
  auto stub = mgb::v1::Scheduler::NewStub(
      grpc::CreateChannel("unix:" + mgbd.socket, grpc::InsecureChannelCredentials()));
  struct Call {
    grpc::ClientContext ctx;
    mgb::v1::TaskBeginRequest request;
    mgb::v1::TaskBeginReply reply;
  };
  std::vector<std::unique_ptr<Call>> calls;
  std::mutex mu;
  std::condition_variable cv;
  int answered = 0, failed = 0;
  for (int i = 0; i < waiting; ++i) {
    auto call = std::make_unique<Call>();
    call->request.set_session_id(client->session().session_id);
    call->request.set_memory_bytes(kMiB);
    for (auto *d : {call->request.mutable_shape()->mutable_grid(),
                    call->request.mutable_shape()->mutable_block()}) {
      d->set_x(1);
      d->set_y(1);
      d->set_z(1);
    }
    stub->async()->TaskBegin(&call->ctx, &call->request, &call->reply, [&](grpc::Status st) {
      std::lock_guard<std::mutex> lock(mu);
      ++answered;
      failed += st.ok() ? 0 : 1;
      cv.notify_all();
    });
    calls.push_back(std::move(call));
  }
  for (int i = 0; i < 2000; ++i) {
    auto s = mgb::Client::StatusAt(mgbd.socket);
    if (s.ok() && s->waiting_size() == waiting) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const long after = mgbd.RssKiB();
  const auto start = Clock::now();
  if (!client->TaskEnd(blocker->task_id).ok()) std::abort();
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return answered == waiting; });
  const double secs = Seconds(Clock::now() - start);
  std::printf("waiting %d parked TaskBegins: mgbd RSS %ld -> %ld KiB = %.1f KiB per waiting task; "
              "one release answered all in %.3f s (%d failed)\n",
              waiting, before, after, static_cast<double>(after - before) / waiting, secs, failed);
}

}  // namespace

int main(int argc, char **argv) {
  std::string mgbd = MGB_BENCH_MGBD, only;
  int64_t iterations = 5000;
  mgb::cli::FlagParser flags(
      "mgb_service_bench",
      "mgb_service_bench [--mgbd PATH] [--iterations N] [--only core|queue|grpc|waiting]\n\n"
      "Measures the scheduler core and mgbd (over its Unix socket); see docs/service.md.");
  flags.String("mgbd", &mgbd, "the mgbd binary to start (default: the one built beside this)");
  flags.Int("iterations", &iterations, "round trips per client for 1 client (64 clients: /16)");
  flags.String("only", &only, "run one group: core, queue, grpc or waiting");
  if (auto code = flags.Parse(argc, argv, nullptr)) return *code;
  if (iterations < 16) return flags.Fail("--iterations must be >= 16");
  signal(SIGPIPE, SIG_IGN);
  if (only.empty() || only == "core") {
    for (const char *policy : {"mgb", "mgb-sm", "memory"}) BenchCore(policy, 100000);
  }
  if (only.empty() || only == "core" || only == "queue") BenchCoreLongQueue();
  if (only.empty() || only == "grpc") {
    BenchRoundTrip(mgbd, 1, static_cast<int>(iterations));
    BenchRoundTrip(mgbd, 64, static_cast<int>(iterations / 16));
  }
  if (only.empty() || only == "waiting") BenchWaiting(mgbd, 10000);
  return 0;
}
