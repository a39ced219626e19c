// mgbd's API over a real Unix socket (in-process daemon, config GPUs): sessions, placement,
// waiting, deadlines, grow (and grows that would wait on each other), Watch.
#include <grpcpp/create_channel.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <thread>

#include "mgb.grpc.pb.h"
#include "mgb/client.h"
#include "test_support.h"

namespace mgb::test {
namespace {

std::unique_ptr<Client> Connect(const TestDaemon &d) {
  auto c = Client::Connect(d.socket, getpid(), "grpc-test");
  REQUIRE(c.ok());
  return std::move(*c);
}

v1::StatusReply StatusOf(const TestDaemon &d) {
  auto s = Client::StatusAt(d.socket);
  REQUIRE(s.ok());
  return *s;
}

// Two sessions, a and b, each holding one placed task of the given size.
struct TwoTasks {
  std::unique_ptr<Client> a, b;
  Placement ta, tb;
};
TwoTasks PlaceTwoTasks(const TestDaemon &d, uint64_t a_bytes, uint64_t b_bytes) {
  TwoTasks two{Connect(d), Connect(d), {}, {}};
  auto ta = two.a->TaskBegin(a_bytes, LaunchShape{}, "a");
  auto tb = two.b->TaskBegin(b_bytes, LaunchShape{}, "b");
  REQUIRE(ta.ok());
  REQUIRE(tb.ok());
  two.ta = *ta;
  two.tb = *tb;
  return two;
}

}  // namespace

TEST_CASE("a session places, ends, and its end releases what it held", "[grpc]") {
  auto d = StartDaemon(2, 16 * kGiB, "mgb", kGiB);
  auto client = Connect(*d);
  CHECK(client->session().session_id.size() == 32);  // 128 random bits in hex
  CHECK(client->session().policy == "mgb");
  CHECK(client->session().context_reserve_bytes == kGiB);
  auto placed = client->TaskBegin(4 * kGiB, LaunchShape{{4, 1, 1}, {64, 1, 1}}, "k");
  REQUIRE(placed.ok());
  CHECK(placed->gpu_name == "g" + std::to_string(placed->gpu_index));
  auto status = StatusOf(*d);
  CHECK(status.gpus(placed->gpu_index).memory_reserved_bytes() == 5 * kGiB);
  CHECK(status.gpus(placed->gpu_index).warps_in_use() == 8);
  REQUIRE(status.tasks_size() == 1);
  CHECK(status.tasks(0).session_id() != client->session().session_id);  // the secret stays secret
  REQUIRE(client->TaskUsage(placed->task_id, 3 * kGiB).ok());
  REQUIRE(client->TaskEnd(placed->task_id).ok());  // sent, not waited for
  client->Flush();                                 // mgbd has it now
  CHECK(StatusOf(*d).gpus(placed->gpu_index).memory_reserved_bytes() == kGiB);  // the context stays
  auto held = client->TaskBegin(2 * kGiB, LaunchShape{}, "held");
  REQUIRE(held.ok());
  client.reset();  // ends the session without TaskEnd
  auto released = WaitFor([&] { return StatusOf(*d).sessions() == 0; }, std::chrono::seconds(1));
  CHECK(released < std::chrono::seconds(1));
  const v1::StatusReply after = StatusOf(*d);
  for (const auto &g : after.gpus()) CHECK(g.memory_reserved_bytes() == 0);
}

TEST_CASE("a waiting TaskBegin is answered as soon as a release makes room", "[grpc]") {
  auto d = StartDaemon(1, 16 * kGiB);
  auto holder = Connect(*d);
  auto waiter = Connect(*d);
  auto first = holder->TaskBegin(12 * kGiB, LaunchShape{}, "first");
  REQUIRE(first.ok());
  absl::StatusOr<Placement> second = absl::UnknownError("not yet");
  std::thread t([&] { second = waiter->TaskBegin(8 * kGiB, LaunchShape{}, "second"); });
  WaitFor([&] { return StatusOf(*d).waiting_size() == 1; }, std::chrono::seconds(2));
  REQUIRE(StatusOf(*d).waiting_size() == 1);
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(holder->TaskEnd(first->task_id).ok());
  t.join();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500));
  REQUIRE(second.ok());
  CHECK(second->gpu_index == 0);
}

TEST_CASE("MGB_QUEUE_PRIORITY orders mgbd's wait queue under --queue-priority",
          "[grpc][priority]") {
  for (const bool honoured : {true, false}) {
    TestDaemon d;
    server::DaemonOptions options = ConfigGpuOptions(d.dir, 1, 16 * kGiB);
    options.queue_priority = honoured;
    auto started = server::Daemon::Start(options);
    REQUIRE(started.ok());
    d.daemon = std::move(*started);
    d.socket = options.socket_path;
    auto holder = Connect(d);
    auto first = holder->TaskBegin(12 * kGiB, LaunchShape{}, "first");
    REQUIRE(first.ok());
    // A session with no priority queues first, then one with MGB_QUEUE_PRIORITY=7.
    unsetenv("MGB_QUEUE_PRIORITY");
    auto low = Connect(d);
    setenv("MGB_QUEUE_PRIORITY", "7", 1);
    auto high = Connect(d);
    unsetenv("MGB_QUEUE_PRIORITY");
    absl::StatusOr<Placement> low_task = absl::UnknownError("not yet"), high_task = low_task;
    std::thread tl([&] { low_task = low->TaskBegin(8 * kGiB, LaunchShape{}, "low"); });
    WaitFor([&] { return StatusOf(d).waiting_size() == 1; }, std::chrono::seconds(2));
    std::thread th([&] { high_task = high->TaskBegin(8 * kGiB, LaunchShape{}, "high"); });
    WaitFor([&] { return StatusOf(d).waiting_size() == 2; }, std::chrono::seconds(2));
    const v1::StatusReply status = StatusOf(d);
    REQUIRE(status.waiting_size() == 2);
    INFO("--queue-priority " << (honoured ? "on" : "off"));
    CHECK(status.waiting(0).label() == (honoured ? "high" : "low"));
    CHECK(status.waiting(1).label() == (honoured ? "low" : "high"));
    REQUIRE(holder->TaskEnd(first->task_id).ok());
    tl.join();
    th.join();
    CHECK(low_task.ok());
    CHECK(high_task.ok());
  }
}

TEST_CASE("deadlines: DEADLINE_EXCEEDED when not placed in time, state restored", "[grpc]") {
  auto d = StartDaemon(1, 16 * kGiB);
  auto client = Connect(*d);
  REQUIRE(client->TaskBegin(16 * kGiB, LaunchShape{}, "all").ok());
  const auto start = std::chrono::steady_clock::now();
  auto late = client->TaskBegin(kGiB, LaunchShape{}, "late",
                                std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(late.ok());
  CHECK(late.status().code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(took >= std::chrono::milliseconds(190));
  CHECK(took < std::chrono::milliseconds(1500));
  CHECK(StatusOf(*d).waiting_size() == 0);
}

TEST_CASE("grow waits for room on the task's GPU", "[grpc]") {
  auto d = StartDaemon(1, 16 * kGiB);
  auto [a, b, ta, tb] = PlaceTwoTasks(*d, 4 * kGiB, 10 * kGiB);
  auto now = a->TaskGrow(ta.task_id, kGiB);
  REQUIRE(now.ok());
  CHECK(*now == 5 * kGiB);
  absl::StatusOr<uint64_t> later = absl::UnknownError("not yet");
  std::thread t([&] { later = a->TaskGrow(ta.task_id, 4 * kGiB); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE(b->TaskEnd(tb.task_id).ok());
  t.join();
  REQUIRE(later.ok());
  CHECK(*later == 9 * kGiB);
}

TEST_CASE("two grows into each other's room: the later is refused, the first waits for room",
          "[grpc]") {
  auto d = StartDaemon(1, 16 * kGiB);
  auto [a, b, ta, tb] = PlaceTwoTasks(*d, 6 * kGiB, 6 * kGiB);
  // 4 GiB free: each grow of 6 GiB fits only if the other task ends, so both waiting would wait
  // for ever.
  std::atomic<bool> a_answered{false};
  absl::StatusOr<uint64_t> a_grow = absl::UnknownError("not yet");
  std::thread grower([&] {
    a_grow = a->TaskGrow(ta.task_id, 6 * kGiB);
    a_answered = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a's grow is parked
  REQUIRE_FALSE(a_answered);
  // The later grow is refused (at once, or its wait cancelled) rather than waiting with a's.
  absl::StatusOr<uint64_t> b_grow = b->TaskGrow(tb.task_id, 6 * kGiB);
  CHECK(b_grow.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(ReasonOf(b_grow.status()) == ErrorReason::kNoRoom);
  CHECK_FALSE(a_answered);
  CHECK(StatusOf(*d).gpus(0).memory_reserved_bytes() == 12 * kGiB);  // the refusal took nothing
  REQUIRE(b->TaskEnd(tb.task_id).ok());
  grower.join();
  REQUIRE(a_grow.ok());
  CHECK(*a_grow == 12 * kGiB);
  CHECK(StatusOf(*d).gpus(0).memory_reserved_bytes() == 12 * kGiB);
  REQUIRE(a->TaskEnd(ta.task_id).ok());
  a->Flush();
  CHECK(StatusOf(*d).gpus(0).memory_reserved_bytes() == 0);
}

TEST_CASE("a release sent without waiting frees the GPU for the program's next task", "[grpc]") {
  // Each task takes most of the only GPU: the next TaskBegin is placed only once the TaskEnd sent
  // just before it reached mgbd, whichever of the two mgbd reads first.
  auto d = StartDaemon(1, 16 * kGiB);
  auto client = Connect(*d);
  for (int i = 0; i < 200; ++i) {
    auto placed = client->TaskBegin(12 * kGiB, LaunchShape{}, "big",
                                    std::chrono::system_clock::now() + std::chrono::seconds(5));
    REQUIRE(placed.ok());
    REQUIRE(client->TaskEnd(placed->task_id).ok());
  }
  client->Flush();
  CHECK(StatusOf(*d).gpus(0).memory_reserved_bytes() == 0);
  CHECK(client->TaskEnd(1).code() == absl::StatusCode::kNotFound);  // ended already
}

TEST_CASE("Watch streams scheduling events", "[grpc]") {
  auto d = StartDaemon(1, 16 * kGiB);
  auto channel = grpc::CreateChannel("unix:" + d->socket, grpc::InsecureChannelCredentials());
  auto stub = v1::Scheduler::NewStub(channel);
  grpc::ClientContext ctx;
  auto stream = stub->Watch(&ctx, v1::WatchRequest());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the watcher is registered
  auto client = Connect(*d);
  auto placed = client->TaskBegin(kGiB, LaunchShape{}, "w");
  REQUIRE(placed.ok());
  std::vector<v1::Event::Kind> kinds;
  v1::Event event;
  int64_t opened_pid = -1;
  while (kinds.size() < 2 && stream->Read(&event)) {
    kinds.push_back(event.kind());
    if (event.kind() == v1::Event::KIND_SESSION_OPENED) {
      opened_pid = event.pid();
      CHECK_FALSE(event.has_gpu_index());  // a session's event names no GPU
    }
  }
  CHECK(opened_pid == getpid());  // was 0: the event came before the session's record
  CHECK(kinds ==
        std::vector<v1::Event::Kind>{v1::Event::KIND_SESSION_OPENED, v1::Event::KIND_TASK_PLACED});
  CHECK(event.memory_bytes() == kGiB);
  CHECK(event.has_gpu_index());
  CHECK(event.gpu_index() == 0u);
  ctx.TryCancel();
  stream->Finish();
}

TEST_CASE("Connect fails fast and names the socket when mgbd is absent", "[grpc]") {
  TempDir dir;
  const auto start = std::chrono::steady_clock::now();
  auto c = Client::Connect(dir.File("none.sock"), getpid(), "x", std::chrono::milliseconds(300));
  REQUIRE_FALSE(c.ok());
  CHECK(c.status().code() == absl::StatusCode::kUnavailable);
  CHECK_THAT(std::string(c.status().message()), Catch::Contains("none.sock"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
}

}  // namespace mgb::test
