// mgb_service_bench: the scheduler's speed and memory, measured (results in docs/service.md).
//   core:    decisions per second of core::Scheduler alone (64 H200-sized GPUs), and the cost of
//            a release event with 10,000 tasks waiting that cannot fit
//   grpc:    decision latency (TaskBegin, then TaskEnd sent without waiting; on the fast lane, or
//            by gRPC calls with MGB_FAST_LANE=0) p50/p99 with 1 and
//            64 concurrent clients against a real mgbd process over its Unix socket, decisions
//            per second, and CPU microseconds per decision in mgbd and in the clients; each
//            setting is repeated (--repeats) and summarised as min / median
//   waiting: mgbd's resident memory per parked TaskBegin with 10,000 waiting, and how long the
//            release that lets them all in takes to answer them all
#include <grpcpp/create_channel.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
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
  for (int g = 0; g < 64; ++g)
    small.push_back(s->TaskBegin(session, Request(2 * kGiB, 1), 0)->task);
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
  std::string dir, socket, config;
  Mgbd(const std::string &binary, int gpus) {
    char dir_template[] = "/tmp/mgb-bench-XXXXXX";
    dir = mkdtemp(dir_template);
    socket = dir + "/mgbd.sock";
    config = dir + "/gpus.json";
    std::ofstream out(config);
    out << "{\"gpus\": [";
    for (int i = 0; i < gpus; ++i) {
      out << (i ? "," : "") << "{\"name\": \"g" << i << "\", \"memory_bytes\": " << kH200
          << ", \"sms\": 132}";
    }
    out << "]}";
    out.close();
    std::vector<std::string> args = {binary, "--socket",          socket, "--gpus",
                                     config, "--context-reserve", "0"};
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
      std::fprintf(stderr, "cannot start %s\n", binary.c_str());
      std::exit(1);
    }
    for (int i = 0; i < 500 && !mgb::Client::StatusAt(socket, std::chrono::milliseconds(50)).ok();
         ++i) {
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
  // User plus system CPU time mgbd has used, in microseconds (/proc/PID/stat fields 14 and 15).
  double CpuMicros() const {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i >= 14) ticks += std::stod(field);
    }
    return ticks * 1e6 / static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  ~Mgbd() {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

double OwnCpuMicros() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto us = [](const timeval &t) {
    return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec);
  };
  return us(usage.ru_utime) + us(usage.ru_stime);
}

// What carries TaskBegin and TaskEnd: the fast lane, unless MGB_FAST_LANE=0 (then gRPC calls).
const char *Transport() {
  const char *env = std::getenv("MGB_FAST_LANE");
  return env != nullptr && std::string(env) == "0" ? "grpc" : "lane";
}

struct RoundTrips {
  double p50_us = 0, p99_us = 0, decisions_per_s = 0, mgbd_cpu_us = 0, client_cpu_us = 0;
};

// One decision: TaskBegin (waits for the placement), then TaskEnd (sent, not waited for; with
// end_waits, waited for as a blocking TaskEnd was: two round trips).
RoundTrips BenchRoundTrip(const std::string &mgbd_binary, int clients, int iterations,
                          bool end_waits) {
  Mgbd mgbd(mgbd_binary, 4);
  std::vector<std::vector<double>> latencies(clients);
  std::vector<std::unique_ptr<mgb::Client>> connected(clients);
  for (auto &client : connected)
    client = std::move(*mgb::Client::Connect(mgbd.socket, getpid(), "bench"));
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      mgb::Client &client = *connected[c];
      mgb::LaunchShape shape{{64, 1, 1}, {256, 1, 1}};
      latencies[c].reserve(iterations);
      ++ready;
      while (!go) std::this_thread::yield();
      for (int i = 0; i < iterations; ++i) {
        const auto t0 = Clock::now();
        auto placed = client.TaskBegin(kGiB, shape, "bench");
        if (!placed.ok() || !client.TaskEnd(placed->task_id).ok()) std::abort();
        if (end_waits) client.Flush();
        latencies[c].push_back(Micros(Clock::now() - t0));
      }
      client.Flush();
    });
  }
  while (ready < clients) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const double mgbd_cpu = mgbd.CpuMicros(), own_cpu = OwnCpuMicros();
  const auto start = Clock::now();
  go = true;
  for (auto &t : threads) t.join();
  const double secs = Seconds(Clock::now() - start);
  std::vector<double> all;
  for (auto &l : latencies) all.insert(all.end(), l.begin(), l.end());
  const double decisions = static_cast<double>(all.size());
  RoundTrips r;
  r.p50_us = Percentile(all, 0.50);
  r.p99_us = Percentile(all, 0.99);
  r.decisions_per_s = decisions / secs;
  r.mgbd_cpu_us = (mgbd.CpuMicros() - mgbd_cpu) / decisions;
  r.client_cpu_us = (OwnCpuMicros() - own_cpu) / decisions;
  std::printf(
      "%s %s %2d client%s: decision p50 %.0f us, p99 %.0f us; %zu decisions in %.2f s = "
      "%.0f decisions/s; CPU per decision: mgbd %.1f us, clients %.1f us\n",
      Transport(), end_waits ? "end-waits" : "end-async", clients, clients == 1 ? " " : "s",
      r.p50_us, r.p99_us, all.size(), secs, r.decisions_per_s, r.mgbd_cpu_us, r.client_cpu_us);
  return r;
}

// The floor under any decision: a unary call mgbd answers at once (TaskEnd naming no session:
// one map lookup under the lock, NOT_FOUND), waited for as a TaskBegin is.
void BenchGrpcFloor(const std::string &mgbd_binary, int iterations) {
  Mgbd mgbd(mgbd_binary, 1);
  auto stub = mgb::v1::Scheduler::NewStub(
      grpc::CreateChannel("unix:" + mgbd.socket, grpc::InsecureChannelCredentials()));
  mgb::v1::TaskEndRequest request;
  request.set_session_id("none");
  std::vector<double> latencies;
  const double mgbd_cpu = mgbd.CpuMicros(), own_cpu = OwnCpuMicros();
  for (int i = 0; i < iterations; ++i) {
    grpc::ClientContext context;
    mgb::v1::TaskEndReply reply;
    const auto t0 = Clock::now();
    if (stub->TaskEnd(&context, request, &reply).error_code() != grpc::StatusCode::NOT_FOUND) {
      std::abort();
    }
    latencies.push_back(Micros(Clock::now() - t0));
  }
  const double n = static_cast<double>(iterations);
  std::printf(
      "grpc floor  1 client : empty unary call p50 %.0f us, p99 %.0f us; CPU per call: "
      "mgbd %.1f us, client %.1f us\n",
      Percentile(latencies, 0.5), Percentile(latencies, 0.99), (mgbd.CpuMicros() - mgbd_cpu) / n,
      (OwnCpuMicros() - own_cpu) / n);
}

double Median(std::vector<double> v) { return Percentile(std::move(v), 0.5); }
double Min(const std::vector<double> &v) { return *std::min_element(v.begin(), v.end()); }
double Max(const std::vector<double> &v) { return *std::max_element(v.begin(), v.end()); }

void BenchRoundTrips(const std::string &mgbd_binary, int clients, int iterations, int repeats,
                     bool end_waits) {
  std::vector<double> p50, p99, rate, mgbd_cpu, client_cpu;
  for (int i = 0; i < repeats; ++i) {
    RoundTrips r = BenchRoundTrip(mgbd_binary, clients, iterations, end_waits);
    p50.push_back(r.p50_us);
    p99.push_back(r.p99_us);
    rate.push_back(r.decisions_per_s);
    mgbd_cpu.push_back(r.mgbd_cpu_us);
    client_cpu.push_back(r.client_cpu_us);
  }
  std::printf(
      "%s %s %2d client%s over %d runs (min / median): p50 %.0f / %.0f us, p99 %.0f / %.0f "
      "us; decisions/s (max / median) %.0f / %.0f; CPU per decision mgbd %.1f / %.1f us, "
      "clients %.1f / %.1f us\n",
      Transport(), end_waits ? "end-waits" : "end-async", clients, clients == 1 ? " " : "s",
      repeats, Min(p50), Median(p50), Min(p99), Median(p99), Max(rate), Median(rate), Min(mgbd_cpu),
      Median(mgbd_cpu), Min(client_cpu), Median(client_cpu));
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
  std::printf(
      "waiting %d parked TaskBegins: mgbd RSS %ld -> %ld KiB = %.1f KiB per waiting task; "
      "one release answered all in %.3f s (%d failed)\n",
      waiting, before, after, static_cast<double>(after - before) / waiting, secs, failed);
}

}  // namespace

int main(int argc, char **argv) {
  std::string mgbd = MGB_BENCH_MGBD, only;
  int64_t iterations = 5000, repeats = 3;
  mgb::cli::FlagParser flags(
      "mgb_service_bench",
      "mgb_service_bench [--mgbd PATH] [--iterations N] [--repeats N] "
      "[--only core|queue|grpc|waiting]\n\n"
      "Measures the scheduler core and mgbd (over its Unix socket); see docs/service.md.");
  flags.String("mgbd", &mgbd, "the mgbd binary to start (default: the one built beside this)");
  flags.Int("iterations", &iterations, "round trips per client for 1 client (64 clients: /16)");
  flags.Int("repeats", &repeats,
            "runs of each gRPC setting, summarised as min / median (default 3)");
  flags.String("only", &only, "run one group: core, queue, grpc or waiting");
  if (auto code = flags.Parse(argc, argv, nullptr)) return *code;
  if (iterations < 16) return flags.Fail("--iterations must be >= 16");
  if (repeats < 1) return flags.Fail("--repeats must be >= 1");
  signal(SIGPIPE, SIG_IGN);
  if (only.empty() || only == "core") {
    for (const char *policy : {"mgb", "mgb-sm", "memory"}) BenchCore(policy, 100000);
  }
  if (only.empty() || only == "core" || only == "queue") BenchCoreLongQueue();
  if (only.empty() || only == "grpc") {
    for (int i = 0; i < repeats; ++i) BenchGrpcFloor(mgbd, static_cast<int>(iterations));
    for (bool end_waits : {false, true}) {
      BenchRoundTrips(mgbd, 1, static_cast<int>(iterations), static_cast<int>(repeats), end_waits);
      BenchRoundTrips(mgbd, 64, static_cast<int>(iterations / 16), static_cast<int>(repeats),
                      end_waits);
    }
  }
  if (only.empty() || only == "waiting") BenchWaiting(mgbd, 10000);
  return 0;
}
