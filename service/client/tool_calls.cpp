// mgb::Client's one-shot calls for tools that open no session: Status, Watch, and the Slurm
// hooks' JobBegin / JobEnd.
#include "client_channel.h"
#include "mgb.grpc.pb.h"
#include "mgb/client.h"

namespace mgb {

namespace {

// One unary call of a tool that opens no session: connect within `timeout`, call, answer.
template <class Request, class Reply>
absl::StatusOr<Reply> CallAt(const std::string &socket_path, std::chrono::milliseconds timeout,
                             grpc::Status (v1::Scheduler::Stub::*method)(grpc::ClientContext *,
                                                                         const Request &, Reply *),
                             const Request &request) {
  BlockSignals block;
  std::shared_ptr<grpc::Channel> channel = ChannelTo(socket_path);
  if (absl::Status st = WaitConnected(*channel, socket_path, timeout); !st.ok()) return st;
  std::unique_ptr<v1::Scheduler::Stub> stub = v1::Scheduler::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  Reply reply;
  if (grpc::Status st = ((*stub).*method)(&context, request, &reply); !st.ok()) {
    return FromGrpc(st, context);
  }
  return reply;
}

}  // namespace

absl::StatusOr<v1::StatusReply> Client::StatusAt(const std::string &socket_path,
                                                 std::chrono::milliseconds timeout) {
  return CallAt(socket_path, timeout, &v1::Scheduler::Stub::Status, v1::StatusRequest());
}

absl::Status Client::JobBeginAt(const std::string &socket_path, uint64_t job_id,
                                uint64_t memory_bytes, std::chrono::milliseconds timeout) {
  v1::JobBeginRequest request;
  request.set_job_id(job_id);
  request.set_memory_bytes(memory_bytes);
  return CallAt(socket_path, timeout, &v1::Scheduler::Stub::JobBegin, request).status();
}

absl::StatusOr<uint32_t> Client::JobEndAt(const std::string &socket_path, uint64_t job_id,
                                          std::chrono::milliseconds timeout) {
  v1::JobEndRequest request;
  request.set_job_id(job_id);
  absl::StatusOr<v1::JobEndReply> reply =
      CallAt(socket_path, timeout, &v1::Scheduler::Stub::JobEnd, request);
  if (!reply.ok()) return reply.status();
  return reply->sessions_ended();
}

absl::Status Client::WatchAt(const std::string &socket_path,
                             const std::function<bool(const v1::Event &)> &on_event,
                             std::chrono::milliseconds connect_timeout) {
  std::shared_ptr<grpc::Channel> channel;
  {
    BlockSignals block;
    channel = ChannelTo(socket_path);
    if (absl::Status st = WaitConnected(*channel, socket_path, connect_timeout); !st.ok())
      return st;
  }
  std::unique_ptr<v1::Scheduler::Stub> stub = v1::Scheduler::NewStub(channel);
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<v1::Event>> stream = stub->Watch(&context, v1::WatchRequest());
  v1::Event event;
  while (stream->Read(&event)) {
    if (!on_event(event)) {
      context.TryCancel();
      stream->Finish();
      return absl::OkStatus();
    }
  }
  grpc::Status status = stream->Finish();
  return status.ok() ? absl::UnavailableError("mgbd ended the event stream")
                     : FromGrpc(status, context);
}

}  // namespace mgb
