// Monitoring: the counters mgbd keeps from its events, their Prometheus text, mgbd's HTTP
// endpoint (`--metrics`), the gRPC health service and `mgb status --format=prometheus`.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "mgb.pb.h"
#include "mgb/client.h"
#include "prometheus_text.h"
#include "scheduler_counters.h"
#include "test_support.h"

namespace mgb::test {
namespace {

core::Event MakeEvent(core::EventKind kind, uint64_t task, core::Micros time, bool grow = false) {
  core::Event e;
  e.kind = kind;
  e.task = task;
  e.time = time;
  e.is_grow = grow;
  return e;
}

// One HTTP/1.0 GET to 127.0.0.1:port; the whole answer (head and body).
std::string HttpGet(int port, const std::string &path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr *>(&in), sizeof(in)) != 0) {
    close(fd);
    return "";
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: x\r\n\r\n";
  (void)!send(fd, request.data(), request.size(), 0);
  std::string answer;
  char buffer[4096];
  for (ssize_t n; (n = recv(fd, buffer, sizeof(buffer), 0)) > 0;) answer.append(buffer, size_t(n));
  close(fd);
  return answer;
}

std::unique_ptr<server::Daemon> DaemonWithMetrics(const TempDir &dir, const std::string &address) {
  server::DaemonOptions options = ConfigGpuOptions(dir, 2, 16 * kGiB);
  options.metrics_address = address;
  auto daemon = server::Daemon::Start(options);
  REQUIRE(daemon.ok());
  return std::move(*daemon);
}

}  // namespace

TEST_CASE("counters: waits land in their histogram bucket, grows and give-ups are counted",
          "[metrics]") {
  server::SchedulerCounters counters;
  counters.Record(MakeEvent(core::EventKind::kTaskPlaced, 1, 5'000'000));  // placed at once
  counters.Record(MakeEvent(core::EventKind::kTaskQueued, 2, 1'000'000));
  counters.Record(MakeEvent(core::EventKind::kTaskPlaced, 2, 3'000'000));  // waited 2 s
  counters.Record(MakeEvent(core::EventKind::kTaskQueued, 2, 4'000'000, /*grow=*/true));
  counters.Record(MakeEvent(core::EventKind::kTaskGrown, 2, 4'500'000));
  core::Event gave_up = MakeEvent(core::EventKind::kTaskCancelled, 3, 6'000'000, true);
  gave_up.reason = core::CancelReason::kNoRoom;
  counters.Record(gave_up);
  v1::SchedulerCounters out;
  counters.Fill(&out);
  CHECK(out.tasks_queued() == 1);
  CHECK(out.grows() == 1);
  CHECK(out.grows_queued() == 1);
  REQUIRE(out.cancellations_size() == 1);
  CHECK(out.cancellations(0).reason() == "no-room");
  CHECK(out.cancellations(0).grow());
  CHECK(out.wait_count() == 2);
  CHECK(out.wait_seconds_sum() == Approx(2.0));
  REQUIRE(out.wait_buckets_size() == 9);
  CHECK(out.wait_buckets(0).count() == 1);  // le 0.001: the one placed at once
  CHECK(out.wait_buckets(3).count() == 1);  // le 1
  CHECK(out.wait_buckets(4).count() == 2);  // le 10: cumulative
  CHECK(std::isinf(out.wait_buckets(8).le_seconds()));
  CHECK(out.wait_buckets(8).count() == 2);
}

TEST_CASE("Prometheus text: one family per metric with HELP and TYPE, labels escaped",
          "[metrics]") {
  v1::StatusReply status;
  v1::GpuStatus *g = status.add_gpus();
  g->set_index(0);
  g->set_name("H100 \"80GB\"");
  g->set_memory_total_bytes(80 * kGiB);
  v1::TaskStatus *t = status.add_tasks();
  t->set_gpu_index(0);
  t->set_allocated_bytes(3 * kGiB);
  status.set_decisions(7);
  const std::string text = metrics::PrometheusText(status);
  CHECK_THAT(text, Catch::Contains("# TYPE mgb_gpu_memory_total_bytes gauge\n"));
  CHECK_THAT(text, Catch::Contains("mgb_gpu_memory_total_bytes{gpu=\"0\",name=\"H100 "
                                   "\\\"80GB\\\"\",uuid=\"\"} 85899345920\n"));
  CHECK_THAT(text, Catch::Contains("mgb_gpu_memory_allocated_bytes{gpu=\"0\""));
  CHECK_THAT(text, Catch::Contains("} 3221225472\n"));
  CHECK_THAT(text, Catch::Contains("mgb_tasks_running 1\n"));
  CHECK_THAT(text, Catch::Contains("# TYPE mgb_decisions_total counter\nmgb_decisions_total 7\n"));
  CHECK_THAT(text, Catch::Contains("# TYPE mgb_task_wait_seconds histogram\n"));
}

TEST_CASE(
    "mgbd --metrics serves /metrics and /healthz over HTTP on loopback; gRPC health answers "
    "SERVING",
    "[metrics]") {
  TempDir dir;
  auto daemon = DaemonWithMetrics(dir, "0");
  REQUIRE(daemon->metrics_port() > 0);
  CHECK_THAT(daemon->metrics_url(), Catch::StartsWith("http://127.0.0.1:"));
  auto client = Client::Connect(dir.File("mgbd.sock"), getpid(), "metrics-test");
  REQUIRE(client.ok());
  LaunchShape shape;
  shape.grid.x = 4;
  shape.block.x = 32;
  auto placed = (*client)->TaskBegin(2 * kGiB, shape, "metrics");
  REQUIRE(placed.ok());
  const std::string page = HttpGet(daemon->metrics_port(), "/metrics");
  CHECK_THAT(page, Catch::StartsWith("HTTP/1.1 200 OK\r\n"));
  CHECK_THAT(page, Catch::Contains("text/plain; version=0.0.4"));
  CHECK_THAT(page, Catch::Contains(
                       "mgb_gpu_memory_total_bytes{gpu=\"1\",name=\"g1\",uuid=\"\"} 17179869184"));
  CHECK_THAT(page, Catch::Contains("mgb_decisions_total 1\n"));
  CHECK_THAT(page, Catch::Contains("mgb_tasks_running 1\n"));
  CHECK_THAT(page, Catch::Contains("mgb_sessions 1\n"));
  CHECK_THAT(page, Catch::Contains("mgb_task_wait_seconds_count 1\n"));
  CHECK_THAT(HttpGet(daemon->metrics_port(), "/healthz"), Catch::EndsWith("\r\n\r\nok\n"));
  CHECK_THAT(HttpGet(daemon->metrics_port(), "/other"), Catch::StartsWith("HTTP/1.1 404"));

  // grpc.health.v1.Health/Check with an empty request: status SERVING (field 1 = 1).
  auto channel =
      grpc::CreateChannel("unix:" + dir.File("mgbd.sock"), grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::ByteBuffer request, reply;
  grpc::Slice empty("", 0);
  request = grpc::ByteBuffer(&empty, 1);
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  grpc::Status health;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &reply,
                 [&](grpc::Status s) {
                   std::lock_guard lock(mu);
                   health = s;
                   done = true;
                   done_cv.notify_all();
                 });
  std::unique_lock lock(mu);
  done_cv.wait(lock, [&] { return done; });
  REQUIRE(health.ok());
  std::vector<grpc::Slice> slices;
  REQUIRE(reply.Dump(&slices).ok());
  std::string bytes;
  for (const grpc::Slice &s : slices)
    bytes.append(reinterpret_cast<const char *>(s.begin()), s.size());
  CHECK(bytes == std::string("\x08\x01", 2));
}

TEST_CASE("events carry a grow's bytes and a give-up's reason; Status names mgbd's version",
          "[metrics]") {
  auto mgbd = StartDaemon(1, 16 * kGiB);
  std::mutex mu;
  std::vector<v1::Event> events;
  std::thread watcher([&] {
    (void)Client::WatchAt(mgbd->socket, [&](const v1::Event &e) {
      std::lock_guard lock(mu);
      events.push_back(e);
      return e.kind() != v1::Event::KIND_TASK_CANCELLED;
    });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the watch is attached
  auto client = Client::Connect(mgbd->socket, getpid(), "events-test");
  REQUIRE(client.ok());
  LaunchShape shape;
  shape.block.x = 32;
  auto placed = (*client)->TaskBegin(10 * kGiB, shape, "grows");
  REQUIRE(placed.ok());
  REQUIRE((*client)->TaskGrow(placed->task_id, 2 * kGiB).ok());
  // Cannot fit beside the first until the deadline passes.
  auto late = (*client)->TaskBegin(
      8 * kGiB, shape, "late", std::chrono::system_clock::now() + std::chrono::milliseconds(300));
  CHECK(late.status().code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(ReasonOf(late.status()) == ErrorReason::kDeadline);
  watcher.join();
  std::lock_guard lock(mu);
  const v1::Event *grown = nullptr, *cancelled = nullptr;
  for (const v1::Event &e : events) {
    if (e.kind() == v1::Event::KIND_TASK_GROWN) grown = &e;
    if (e.kind() == v1::Event::KIND_TASK_CANCELLED) cancelled = &e;
  }
  REQUIRE(grown != nullptr);
  CHECK(grown->grow());
  CHECK(grown->grow_bytes() == 2 * kGiB);
  CHECK(grown->memory_bytes() == 12 * kGiB);
  REQUIRE(cancelled != nullptr);
  CHECK(cancelled->cancel_reason() == "deadline");
  CHECK_FALSE(cancelled->has_gpu_index());  // it never had one
  CHECK_FALSE(cancelled->grow());
  auto status = Client::StatusAt(mgbd->socket);
  REQUIRE(status.ok());
  CHECK_FALSE(status->mgbd_version().empty());
  CHECK(status->mgbd_version() == (*client)->session().mgbd_version);
}

// A connection to 127.0.0.1:port that has sent nothing (yet).
int OpenSilent(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr *>(&in), sizeof(in)) == 0);
  return fd;
}

std::chrono::milliseconds TimeHealthz(int port, std::string *answer) {
  const auto start = std::chrono::steady_clock::now();
  *answer = HttpGet(port, "/healthz");
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start);
}

// Issue 32, item 6: one connection at a time, a 1 s timeout per byte, a backlog of 16.
TEST_CASE("slow and silent metrics clients do not stop /healthz for others", "[metrics][hostile]") {
  TempDir dir;
  auto daemon = DaemonWithMetrics(dir, "0");
  const int port = daemon->metrics_port();
  std::string answer;
  SECTION("a client sending a byte every 300 ms") {
    const int slow = OpenSilent(port);
    std::atomic<bool> stop{false};
    std::thread trickle([&] {
      const std::string request = "GET /metrics HTTP/1.0\r\n";
      for (size_t i = 0; i < request.size() && !stop.load(); ++i) {
        if (send(slow, &request[i], 1, MSG_NOSIGNAL) != 1) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(TimeHealthz(port, &answer) < std::chrono::milliseconds(1000));
    CHECK_THAT(answer, Catch::EndsWith("ok\n"));
    stop = true;
    trickle.join();
    close(slow);
  }
  SECTION("100 connections that never speak") {
    std::vector<int> silent;
    for (int i = 0; i < 100; ++i) silent.push_back(OpenSilent(port));
    CHECK(TimeHealthz(port, &answer) < std::chrono::milliseconds(1000));
    CHECK_THAT(answer, Catch::EndsWith("ok\n"));
    for (const int fd : silent) close(fd);
  }
}

TEST_CASE("a bad --metrics address is refused, naming the flag", "[metrics]") {
  TempDir dir;
  server::DaemonOptions options = ConfigGpuOptions(dir, 1, 16 * kGiB);
  for (const char *bad : {"x", "1.2.3:99999", "example.com:9400"}) {
    options.metrics_address = bad;
    auto daemon = server::Daemon::Start(options);
    REQUIRE_FALSE(daemon.ok());
    CHECK_THAT(std::string(daemon.status().message()), Catch::Contains("--metrics"));
  }
}

TEST_CASE("the Grafana dashboard asks only for metrics mgbd serves", "[metrics]") {
  v1::StatusReply status;
  status.add_gpus()->set_index(0);
  server::SchedulerCounters counters;
  core::Event cancelled = MakeEvent(core::EventKind::kTaskCancelled, 1, 1);
  cancelled.reason = core::CancelReason::kDeadline;
  counters.Record(cancelled);
  counters.Fill(status.mutable_counters());
  const std::string text = metrics::PrometheusText(status);
  const nlohmann::json dashboard = nlohmann::json::parse(ReadFile(MGB_GRAFANA_DASHBOARD));
  std::set<std::string> asked;
  const std::regex metric("mgb_[a-z_]+");
  for (const auto &panel : dashboard.at("panels")) {
    for (const auto &target : panel.at("targets")) {
      const std::string expr = target.at("expr");
      for (std::sregex_iterator it(expr.begin(), expr.end(), metric), end; it != end; ++it) {
        std::string name = it->str();
        for (const char *suffix : {"_bucket", "_sum", "_count"}) {  // a histogram's series
          const std::string s = suffix;
          if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
              text.find("# TYPE " + name.substr(0, name.size() - s.size()) + " histogram") !=
                  std::string::npos) {
            name = name.substr(0, name.size() - s.size());
          }
        }
        asked.insert(name);
      }
    }
  }
  CHECK(asked.size() >= 12);
  for (const std::string &name : asked) {
    INFO(name);
    CHECK_THAT(text, Catch::Contains("# TYPE " + name + " "));
  }
}

TEST_CASE("mgb status --format=prometheus prints the same metrics", "[metrics]") {
  auto mgbd = StartDaemon(1, 16 * kGiB);
  auto text = RunProcess({MGB_CLI, "status", "--format=prometheus", "--socket", mgbd->socket});
  CHECK(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("# TYPE mgb_gpu_memory_total_bytes gauge") &&
                           Catch::Contains("mgb_tasks_waiting 0"));
  auto bad = RunProcess({MGB_CLI, "status", "--format=yaml", "--socket", mgbd->socket});
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--format must be table, json or prometheus"));
}

}  // namespace mgb::test
