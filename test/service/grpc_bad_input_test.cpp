// Bad input through the real gRPC API: an error naming the field and its reason, state unchanged,
// no crash.
#include <grpcpp/create_channel.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "mgb.grpc.pb.h"
#include "mgb/client.h"
#include "test_support.h"

namespace mgb::test {
namespace {

// A call's status and the reason mgbd sent in its trailing metadata ("" when none).
struct Answer {
  grpc::Status status;
  std::string reason;
};

struct Raw {
  std::unique_ptr<v1::Scheduler::Stub> stub;
  explicit Raw(const std::string &socket)
      : stub(v1::Scheduler::NewStub(
            grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()))) {}
  Answer Begin(const v1::TaskBeginRequest &r) {
    grpc::ClientContext ctx;
    v1::TaskBeginReply reply;
    Answer answer{stub->TaskBegin(&ctx, r, &reply), ""};
    for (const auto &[key, value] : ctx.GetServerTrailingMetadata()) {
      if (key == "mgb-error-reason") answer.reason.assign(value.data(), value.size());
    }
    return answer;
  }
};

v1::TaskBeginRequest Valid(const std::string &session) {
  v1::TaskBeginRequest r;
  r.set_session_id(session);
  r.set_memory_bytes(kGiB);
  for (v1::Dim3 *d : {r.mutable_shape()->mutable_grid(), r.mutable_shape()->mutable_block()}) {
    d->set_x(1);
    d->set_y(1);
    d->set_z(1);
  }
  return r;
}

std::string Fingerprint(const std::string &socket) {
  auto s = Client::StatusAt(socket);
  REQUIRE(s.ok());
  std::string f = std::to_string(s->tasks_size()) + "/" + std::to_string(s->waiting_size()) + "/" +
                  std::to_string(s->decisions());
  for (const auto &g : s->gpus()) f += "|" + std::to_string(g.memory_reserved_bytes());
  return f;
}

void CheckError(const Answer &answer, grpc::StatusCode code, const std::string &reason,
                const std::string &field) {
  CHECK(answer.status.error_code() == code);
  CHECK(answer.reason == reason);
  CHECK_THAT(answer.status.error_message(), Catch::Contains(field));
}

}  // namespace

TEST_CASE("bad TaskBegin/TaskEnd/TaskGrow/TaskUsage/TaskLaunch requests over gRPC",
          "[grpc][input]") {
  auto d = StartDaemon(2, 16 * kGiB);
  auto owner = Client::Connect(d->socket, getpid(), "owner");
  auto intruder = Client::Connect(d->socket, getpid(), "intruder");
  REQUIRE(owner.ok());
  REQUIRE(intruder.ok());
  auto held = (*owner)->TaskBegin(2 * kGiB, LaunchShape{}, "held");
  REQUIRE(held.ok());
  const std::string before = Fingerprint(d->socket);
  Raw raw(d->socket);
  const std::string session = (*owner)->session().session_id;

  v1::TaskBeginRequest r = Valid(session);
  r.mutable_shape()->mutable_grid()->set_x(0);
  const std::string invalid_field = "ERROR_REASON_INVALID_FIELD";
  CheckError(raw.Begin(r), grpc::StatusCode::INVALID_ARGUMENT, invalid_field,
             "shape.grid.x must be > 0");
  r = Valid(session);
  r.mutable_shape()->mutable_block()->set_z(0);
  CheckError(raw.Begin(r), grpc::StatusCode::INVALID_ARGUMENT, invalid_field,
             "shape.block.z must be > 0");
  r = Valid(session);
  r.clear_shape();
  CheckError(raw.Begin(r), grpc::StatusCode::INVALID_ARGUMENT, invalid_field, "shape.grid.x");
  r = Valid(session);
  r.set_memory_bytes(17 * kGiB);
  CheckError(raw.Begin(r), grpc::StatusCode::INVALID_ARGUMENT, "ERROR_REASON_NEVER_FITS",
             "memory_bytes");
  r = Valid("0123456789abcdef0123456789abcdef");
  CheckError(raw.Begin(r), grpc::StatusCode::NOT_FOUND, "ERROR_REASON_UNKNOWN_SESSION",
             "session_id");
  CheckError(raw.Begin(Valid("")), grpc::StatusCode::NOT_FOUND, "ERROR_REASON_UNKNOWN_SESSION",
             "session_id");
  // A negative deadline is an error, not "wait for ever" (while 1 would be long expired).
  r = Valid(session);
  r.set_deadline_unix_ms(-1);
  CheckError(raw.Begin(r), grpc::StatusCode::INVALID_ARGUMENT, invalid_field,
             "deadline_unix_ms is -1");

  // Another session's task: NOT_FOUND, and the owner's task is untouched.
  CHECK((*intruder)->TaskEnd(held->task_id).code() == absl::StatusCode::kNotFound);
  CHECK((*intruder)->TaskUsage(held->task_id, 1).code() == absl::StatusCode::kNotFound);
  CHECK((*intruder)->TaskGrow(held->task_id, 1).status().code() == absl::StatusCode::kNotFound);
  CHECK((*intruder)
            ->TaskLaunch(held->task_id, LaunchShape{{64, 1, 1}, {256, 1, 1}})
            .status()
            .code() == absl::StatusCode::kNotFound);
  CHECK(ReasonOf((*intruder)->TaskEnd(held->task_id)) == ErrorReason::kUnknownTask);
  auto no_threads = (*owner)->TaskLaunch(held->task_id, LaunchShape{{64, 1, 1}, {0, 1, 1}});
  CHECK(no_threads.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(ReasonOf(no_threads.status()) == ErrorReason::kInvalidField);
  CHECK_THAT(std::string(no_threads.status().message()),
             Catch::Contains("shape.block.x must be > 0"));
  auto unknown = (*owner)->TaskEnd(987654);
  CHECK(unknown.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(unknown.message()), Catch::Contains("task_id"));
  CHECK((*owner)->TaskGrow(held->task_id, 0).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(Fingerprint(d->socket) == before);
  CHECK((*owner)->TaskEnd(held->task_id).ok());  // still the owner's to end
}

TEST_CASE("mgb::Client returns mgbd's reason with each refusal, on the fast lane and by gRPC",
          "[grpc][input]") {
  auto d = StartDaemon(1, 16 * kGiB);
  for (const bool lane : {true, false}) {
    INFO((lane ? "TaskBegin on the fast lane" : "MGB_FAST_LANE=0"));
    if (!lane) setenv("MGB_FAST_LANE", "0", 1);
    auto client = Client::Connect(d->socket, getpid(), "reasons");
    unsetenv("MGB_FAST_LANE");
    REQUIRE(client.ok());
    auto too_big = (*client)->TaskBegin(17 * kGiB, LaunchShape{}, "too big");
    CHECK(too_big.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(ReasonOf(too_big.status()) == ErrorReason::kNeverFits);
    auto held = (*client)->TaskBegin(12 * kGiB, LaunchShape{}, "held");
    REQUIRE(held.ok());
    auto late =
        (*client)->TaskBegin(8 * kGiB, LaunchShape{}, "late",
                             std::chrono::system_clock::now() + std::chrono::milliseconds(100));
    CHECK(late.status().code() == absl::StatusCode::kDeadlineExceeded);
    CHECK(ReasonOf(late.status()) == ErrorReason::kDeadline);
    // TaskGrow is gRPC's either way.
    CHECK(ReasonOf((*client)->TaskGrow(held->task_id, 0).status()) == ErrorReason::kInvalidField);
    CHECK(ReasonOf((*client)->TaskGrow(held->task_id, 8 * kGiB).status()) ==
          ErrorReason::kNeverFits);
    REQUIRE((*client)->TaskEnd(held->task_id).ok());
    (*client)->Flush();
  }
  // What is not mgbd's refusal has no reason.
  TempDir dir;
  auto absent =
      Client::Connect(dir.File("none.sock"), getpid(), "x", std::chrono::milliseconds(100));
  CHECK(absent.status().code() == absl::StatusCode::kUnavailable);
  CHECK(ReasonOf(absent.status()) == ErrorReason::kUnspecified);
}

}  // namespace mgb::test
