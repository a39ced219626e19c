// The fast lane (service/lane/lane_wire.h) against a real mgbd over its socket: decisions on it,
// refusals with the RPC's codes, bad frames that end only their own connection, a closed
// connection that withdraws its waiting TaskBegin, and MGB_FAST_LANE=0 (gRPC for every call).
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "lane_client.h"
#include "lane_wire.h"
#include "mgb/client.h"
#include "test_support.h"

namespace mgb::test {
namespace {

constexpr auto kSecond = std::chrono::seconds(1);

LaneClient::Until In(std::chrono::milliseconds ms) { return std::chrono::steady_clock::now() + ms; }

v1::TaskBeginRequest BeginRequest(const Client &client, uint64_t bytes) {
  v1::TaskBeginRequest request;
  request.set_session_id(client.session().session_id);
  request.set_memory_bytes(bytes);
  request.set_label("lane");
  for (v1::Dim3 *d :
       {request.mutable_shape()->mutable_grid(), request.mutable_shape()->mutable_block()}) {
    d->set_x(1);
    d->set_y(1);
    d->set_z(1);
  }
  return request;
}

// A raw connection to mgbd's socket, for frames no LaneClient would send.
int RawConnection(const std::string &socket) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket.c_str(), sizeof address.sun_path - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(connect(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) == 0);
  return fd;
}

void SendHello(int fd, uint32_t version) { REQUIRE(lane::WriteHello(fd, version).ok()); }

// Waiting tasks, listed or only counted.
int Waiting(const std::string &socket) {
  auto status = Client::StatusAt(socket);
  return status.ok() ? status->waiting_size() + static_cast<int>(status->waiting_not_listed()) : -1;
}

// Threads of this process (the test and the in-process mgbd).
size_t ThreadCount() {
  size_t count = 0;
  for (const auto &entry : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)entry;
    ++count;
  }
  return count;
}

}  // namespace

TEST_CASE("the fast lane places, refuses with the RPC's codes, and releases in order", "[lane]") {
  auto d = StartDaemon(1, 16 * kGiB);
  auto client = Client::Connect(d->socket, getpid(), "lane-test");
  REQUIRE(client.ok());
  auto lane = LaneClient::Open(d->socket, "lane-test", std::chrono::milliseconds(1000));
  REQUIRE(lane.ok());
  auto placed = (*lane)->Begin(BeginRequest(**client, 12 * kGiB), In(kSecond));
  REQUIRE(placed.ok());
  CHECK(placed->gpu_name() == "g0");
  CHECK(Client::StatusAt(d->socket)->gpus(0).memory_reserved_bytes() == 12 * kGiB);

  auto too_big = (*lane)->Begin(BeginRequest(**client, 100 * kGiB), In(kSecond));
  CHECK(too_big.status().code() ==
        absl::StatusCode::kInvalidArgument);  // never fits, as the RPC says
  CHECK(ReasonOf(too_big.status()) == ErrorReason::kNeverFits);
  v1::TaskBeginRequest no_session = BeginRequest(**client, kGiB);
  no_session.set_session_id("forged");
  auto forged = (*lane)->Begin(no_session, In(kSecond));
  CHECK(forged.status().code() == absl::StatusCode::kNotFound);
  CHECK(ReasonOf(forged.status()) == ErrorReason::kUnknownSession);
  // A waiting TaskBegin is answered by mgbd at its deadline, with the RPC's code.
  v1::TaskBeginRequest waits = BeginRequest(**client, 8 * kGiB);
  waits.set_deadline_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count() +
                             200);
  auto expired = (*lane)->Begin(waits, In(std::chrono::milliseconds(3000)));
  CHECK(expired.status().code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(ReasonOf(expired.status()) == ErrorReason::kDeadline);

  v1::TaskEndRequest end;
  end.set_session_id((*client)->session().session_id);
  end.set_task_id(placed->task_id());
  REQUIRE((*lane)->SendEnd(end).ok());
  end.set_task_id(987654);  // refused: reported on the next read, the connection goes on
  REQUIRE((*lane)->SendEnd(end).ok());
  CHECK((*lane)->unconfirmed_ends() == 2);
  REQUIRE((*lane)->Ping(In(kSecond)).ok());
  CHECK((*lane)->unconfirmed_ends() == 0);
  CHECK(Client::StatusAt(d->socket)->gpus(0).memory_reserved_bytes() == 0);
  CHECK((*lane)->Begin(BeginRequest(**client, kGiB), In(kSecond)).ok());
}

TEST_CASE("bad lane frames end only their own connection", "[lane][input]") {
  auto d = StartDaemon(1, 16 * kGiB);
  SECTION("an unknown version is refused with a reason") {
    const int fd = RawConnection(d->socket);
    SendHello(fd, 99);
    auto answer = lane::ReadFrame(fd, In(kSecond));
    REQUIRE(answer.ok());
    CHECK(answer->kind == lane::Kind::kError);
    v1::LaneError error;
    REQUIRE(error.ParseFromString(answer->payload));
    CHECK(error.code() == static_cast<int>(absl::StatusCode::kFailedPrecondition));
    CHECK(error.reason() == v1::ERROR_REASON_LANE_VERSION);
    CHECK(lane::ReadFrame(fd, In(kSecond)).status().code() == absl::StatusCode::kUnavailable);
    close(fd);
  }
  SECTION("an unparseable message is refused and the connection goes on") {
    const int fd = RawConnection(d->socket);
    SendHello(fd, lane::kVersion);
    REQUIRE(lane::ReadFrame(fd, In(kSecond))->kind == lane::Kind::kHello);
    const char garbage[] = {5, 0, 0, 0, 7, 0, 0, 0, 1, '\xff', '\xff', '\xff', '\xff', '\xff'};
    REQUIRE(send(fd, garbage, sizeof garbage, MSG_NOSIGNAL) == sizeof garbage);
    auto refused = lane::ReadFrame(fd, In(kSecond));
    REQUIRE(refused.ok());
    CHECK(refused->call == 7);
    CHECK(refused->kind == lane::Kind::kError);
    v1::LaneError error;
    REQUIRE(error.ParseFromString(refused->payload));
    CHECK(error.reason() == v1::ERROR_REASON_MALFORMED_FRAME);
    REQUIRE(lane::WriteFrame(fd, 8, lane::Kind::kPing).ok());
    CHECK(lane::ReadFrame(fd, In(kSecond))->kind == lane::Kind::kPong);
    close(fd);
  }
  SECTION("a frame past the size limit or of an unknown kind closes the connection") {
    for (const bool oversized : {true, false}) {
      const int fd = RawConnection(d->socket);
      SendHello(fd, lane::kVersion);
      REQUIRE(lane::ReadFrame(fd, In(kSecond))->kind == lane::Kind::kHello);
      const char big[] = {0, 0, 0, 1, 1, 0, 0, 0, 1};  // 16 MiB announced
      const char odd[] = {0, 0, 0, 0, 2, 0, 0, 0, 77};
      REQUIRE(send(fd, oversized ? big : odd, 9, MSG_NOSIGNAL) == 9);
      absl::StatusOr<lane::Frame> next = lane::ReadFrame(fd, In(kSecond));
      if (next.ok()) {  // the unknown kind is named before the end
        CHECK(next->kind == lane::Kind::kError);
        next = lane::ReadFrame(fd, In(kSecond));
      }
      CHECK(next.status().code() == absl::StatusCode::kUnavailable);
      close(fd);
    }
  }
  // mgbd goes on serving gRPC and the lane.
  CHECK(Client::StatusAt(d->socket).ok());
  CHECK(LaneClient::Open(d->socket, "lane-test", std::chrono::milliseconds(1000)).ok());
}

TEST_CASE("a lane connection that closes withdraws its waiting TaskBegin", "[lane]") {
  auto d = StartDaemon(1, 16 * kGiB);
  auto client = Client::Connect(d->socket, getpid(), "lane-test");
  REQUIRE(client.ok());
  auto held = (*client)->TaskBegin(12 * kGiB, LaunchShape{}, "held");
  REQUIRE(held.ok());
  {
    auto lane = LaneClient::Open(d->socket, "lane-test", std::chrono::milliseconds(1000));
    REQUIRE(lane.ok());
    // Waits (8 GiB does not fit); the client gives up first and drops the connection.
    auto waited =
        (*lane)->Begin(BeginRequest(**client, 8 * kGiB), In(std::chrono::milliseconds(300)));
    CHECK(waited.status().code() == absl::StatusCode::kDeadlineExceeded);
    CHECK((*lane)->broken());
    CHECK(Client::StatusAt(d->socket)->waiting_size() == 1);
  }
  CHECK(WaitFor([&] { return Client::StatusAt(d->socket)->waiting_size() == 0; }, kSecond) <
        kSecond);
  REQUIRE((*client)->TaskEnd(held->task_id).ok());
  (*client)->Flush();
  CHECK(Client::StatusAt(d->socket)->gpus(0).memory_reserved_bytes() == 0);  // nothing placed late
}

// Issue 32, item 1: one thread per lane connection let anyone make mgbd die (std::system_error)
// once the kernel refused a thread (a pids cgroup, RLIMIT_NPROC).
TEST_CASE("lane connections cost mgbd no thread each", "[lane][hostile]") {
  auto d = StartDaemon(1, 16 * kGiB);
  auto client = Client::Connect(d->socket, getpid(), "lane-test");
  REQUIRE(client.ok());
  const size_t before = ThreadCount();
  std::vector<int> open;
  for (int i = 0; i < 300; ++i) {
    const int fd = RawConnection(d->socket);
    SendHello(fd, lane::kVersion);
    open.push_back(fd);
  }
  for (const int fd : open)
    REQUIRE(lane::ReadFrame(fd, In(5 * kSecond))->kind == lane::Kind::kHello);
  CHECK(ThreadCount() < before + 16);
  // All of them work.
  REQUIRE(lane::WriteFrame(open.back(), 3, lane::Kind::kPing).ok());
  CHECK(lane::ReadFrame(open.back(), In(kSecond))->kind == lane::Kind::kPong);
  auto lane = LaneClient::Open(d->socket, "lane-test", std::chrono::milliseconds(1000));
  REQUIRE(lane.ok());
  CHECK((*lane)->Begin(BeginRequest(**client, kGiB), In(kSecond)).ok());
  for (const int fd : open) close(fd);
}

// Issue 32, item 4: answers were written with a blocking send (1 s timeout) by the thread that
// made the decision, so each connection that parked TaskBegins and never read delayed every
// later answer by a second (5.1 s with 5 connections).
TEST_CASE("a lane peer that never reads its answers delays no one else", "[lane][hostile]") {
  auto d = StartDaemon(1, 16 * kGiB);
  auto client = Client::Connect(d->socket, getpid(), "lane-test");
  REQUIRE(client.ok());
  auto held = (*client)->TaskBegin(16 * kGiB, LaunchShape{}, "held");
  REQUIRE(held.ok());
  constexpr int kHostile = 5;
  // Their answers overflow a socket buffer; within the waiting tasks one user may have.
  constexpr int kParkedEach = 800;
  std::vector<int> hostile;
  for (int h = 0; h < kHostile; ++h) {
    const int fd = RawConnection(d->socket);
    SendHello(fd, lane::kVersion);
    REQUIRE(lane::ReadFrame(fd, In(kSecond))->kind == lane::Kind::kHello);
    const v1::TaskBeginRequest small = BeginRequest(**client, 1 << 20);
    for (int i = 0; i < kParkedEach; ++i) {
      REQUIRE(lane::WriteFrame(fd, static_cast<uint32_t>(i + 1), lane::Kind::kBegin, &small).ok());
    }
    hostile.push_back(fd);  // and never read again
  }
  REQUIRE(WaitFor([&] { return Waiting(d->socket) == kHostile * kParkedEach; }, 10 * kSecond) <
          10 * kSecond);
  auto honest = LaneClient::Open(d->socket, "lane-test", std::chrono::milliseconds(1000));
  REQUIRE(honest.ok());
  std::optional<std::chrono::steady_clock::time_point> answered;
  std::thread waiter([&] {
    auto placed = (*honest)->Begin(BeginRequest(**client, kGiB), In(30 * kSecond));
    if (placed.ok()) answered = std::chrono::steady_clock::now();
  });
  REQUIRE(WaitFor([&] { return Waiting(d->socket) == kHostile * kParkedEach + 1; }, 10 * kSecond) <
          10 * kSecond);
  const auto released = std::chrono::steady_clock::now();
  REQUIRE((*client)->TaskEnd(held->task_id).ok());
  (*client)->Flush();
  waiter.join();
  REQUIRE(answered.has_value());
  // Before: about kHostile seconds. The bound leaves room for a loaded machine.
  CHECK(*answered - released < std::chrono::milliseconds(1500));
  for (const int fd : hostile) close(fd);
}

TEST_CASE("MGB_FAST_LANE=0: every call goes by gRPC, with the same results", "[lane]") {
  auto d = StartDaemon(1, 16 * kGiB);
  setenv("MGB_FAST_LANE", "0", 1);
  auto client = Client::Connect(d->socket, getpid(), "grpc-only");
  unsetenv("MGB_FAST_LANE");
  REQUIRE(client.ok());
  for (int i = 0; i < 20; ++i) {
    auto placed = (*client)->TaskBegin(12 * kGiB, LaunchShape{}, "big",
                                       std::chrono::system_clock::now() + std::chrono::seconds(5));
    REQUIRE(placed.ok());
    REQUIRE((*client)->TaskEnd(placed->task_id).ok());
  }
  (*client)->Flush();
  CHECK(Client::StatusAt(d->socket)->gpus(0).memory_reserved_bytes() == 0);
}

}  // namespace mgb::test
