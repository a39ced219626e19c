// Bad input through the real gRPC API: an error naming the field, state unchanged, no crash.
#include <grpcpp/create_channel.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "mgb.grpc.pb.h"
#include "mgb/client.h"
#include "test_support.h"

namespace mgb::test {
namespace {

struct Raw {
  std::unique_ptr<v1::Scheduler::Stub> stub;
  explicit Raw(const std::string &socket)
      : stub(v1::Scheduler::NewStub(
            grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()))) {}
  grpc::Status Begin(const v1::TaskBeginRequest &r) {
    grpc::ClientContext ctx;
    v1::TaskBeginReply reply;
    return stub->TaskBegin(&ctx, r, &reply);
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
  for (const auto &g : s->gpus()) f += "|" + std::to_string(g.memory_reserved());
  return f;
}

void CheckError(const grpc::Status &st, grpc::StatusCode code, const std::string &field) {
  CHECK(st.error_code() == code);
  CHECK_THAT(st.error_message(), Catch::Contains(field));
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
  CheckError(raw.Begin(r), grpc::StatusCode::INVALID_ARGUMENT, "shape.grid.x must be > 0");
  r = Valid(session);
  r.mutable_shape()->mutable_block()->set_z(0);
  CheckError(raw.Begin(r), grpc::StatusCode::INVALID_ARGUMENT, "shape.block.z must be > 0");
  r = Valid(session);
  r.clear_shape();
  CheckError(raw.Begin(r), grpc::StatusCode::INVALID_ARGUMENT, "shape.grid.x");
  r = Valid(session);
  r.set_memory_bytes(17 * kGiB);
  CheckError(raw.Begin(r), grpc::StatusCode::INVALID_ARGUMENT, "memory_bytes");
  r = Valid("0123456789abcdef0123456789abcdef");
  CheckError(raw.Begin(r), grpc::StatusCode::NOT_FOUND, "session_id");
  CheckError(raw.Begin(Valid("")), grpc::StatusCode::NOT_FOUND, "session_id");
  // A negative deadline is an error, not "wait for ever" (while 1 would be long expired).
  r = Valid(session);
  r.set_deadline_unix_ms(-1);
  CheckError(raw.Begin(r), grpc::StatusCode::INVALID_ARGUMENT, "deadline_unix_ms is -1");

  // Another session's task: NOT_FOUND, and the owner's task is untouched.
  CHECK((*intruder)->TaskEnd(held->task_id).code() == absl::StatusCode::kNotFound);
  CHECK((*intruder)->TaskUsage(held->task_id, 1).code() == absl::StatusCode::kNotFound);
  CHECK((*intruder)->TaskGrow(held->task_id, 1).status().code() == absl::StatusCode::kNotFound);
  CHECK((*intruder)
            ->TaskLaunch(held->task_id, LaunchShape{{64, 1, 1}, {256, 1, 1}})
            .status()
            .code() == absl::StatusCode::kNotFound);
  auto no_threads = (*owner)->TaskLaunch(held->task_id, LaunchShape{{64, 1, 1}, {0, 1, 1}});
  CHECK(no_threads.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(no_threads.status().message()),
             Catch::Contains("shape.block.x must be > 0"));
  auto unknown = (*owner)->TaskEnd(987654);
  CHECK(unknown.code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(unknown.message()), Catch::Contains("task_id"));
  CHECK((*owner)->TaskGrow(held->task_id, 0).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(Fingerprint(d->socket) == before);
  CHECK((*owner)->TaskEnd(held->task_id).ok());  // still the owner's to end
}

}  // namespace mgb::test
