// mgb::Client over gRPC: a blocking API; the session is an Attach stream read by a background
// thread that takes none of the application's signals.
#include "mgb/client.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "mgb.grpc.pb.h"

namespace mgb {

std::string SocketFromEnvironment() {
  const char *env = std::getenv("MGB_SOCKET");
  return env != nullptr && *env != '\0' ? env : kDefaultSocket;
}

namespace {

absl::Status FromGrpc(const grpc::Status &status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

// Blocks every asynchronous signal in the calling thread while alive, so that threads started
// meanwhile (ours and gRPC's) inherit a mask that leaves signals to the application.
class BlockSignals {
 public:
  BlockSignals() {
    sigset_t all;
    sigfillset(&all);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT}) sigdelset(&all, sig);
    pthread_sigmask(SIG_BLOCK, &all, &old_);
  }
  ~BlockSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

std::shared_ptr<grpc::Channel> ChannelTo(const std::string &socket_path) {
  return grpc::CreateChannel("unix:" + socket_path, grpc::InsecureChannelCredentials());
}

absl::Status WaitConnected(grpc::Channel &channel, const std::string &socket_path,
                           std::chrono::milliseconds timeout) {
  if (channel.WaitForConnected(std::chrono::system_clock::now() + timeout)) return absl::OkStatus();
  // Say why when the file tells: a socket this user may not use is not "mgbd not running".
  if (access(socket_path.c_str(), F_OK) == 0 && access(socket_path.c_str(), R_OK | W_OK) != 0 &&
      errno == EACCES) {
    return absl::PermissionDeniedError(absl::StrCat(
        "mgbd's socket ", socket_path,
        " exists but this user may not connect to it (permission denied); mgbd admits its own "
        "user and group: ask its operator to add you to that group"));
  }
  return absl::UnavailableError(absl::StrCat("mgbd is not reachable at socket ", socket_path,
                                             " (waited ", timeout.count(),
                                             " ms); is mgbd running? Use --socket or MGB_SOCKET"));
}

int64_t UnixMs(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// gRPC's own deadline is a safety net a little after mgbd's (which answers DEADLINE_EXCEEDED).
void SetDeadline(grpc::ClientContext &context, const Deadline &deadline) {
  if (deadline) context.set_deadline(*deadline + std::chrono::seconds(2));
}

void ToProto(const Dim3 &d, v1::Dim3 *out) {
  out->set_x(d.x);
  out->set_y(d.y);
  out->set_z(d.z);
}

void ToProto(const LaunchShape &shape, v1::LaunchShape *out) {
  ToProto(shape.grid, out->mutable_grid());
  ToProto(shape.block, out->mutable_block());
  out->set_registers_per_thread(shape.registers_per_thread);
  out->set_shared_bytes_per_block(shape.shared_bytes_per_block);
}

class GrpcClient final : public Client {
 public:
  GrpcClient(std::shared_ptr<grpc::Channel> channel)
      : channel_(std::move(channel)), stub_(v1::Scheduler::NewStub(channel_)) {}

  ~GrpcClient() override {
    attach_context_.TryCancel();
    if (reader_.joinable()) reader_.join();
  }

  absl::Status Open(int64_t pid, const std::string &program, std::chrono::milliseconds timeout) {
    v1::AttachRequest request;
    request.set_pid(pid);
    request.set_program(program);
    reader_ = std::thread([this, request] {
      std::unique_ptr<grpc::ClientReader<v1::SessionEvent>> stream =
          stub_->Attach(&attach_context_, request);
      v1::SessionEvent event;
      while (stream->Read(&event)) {
        if (!event.has_info()) continue;
        std::lock_guard<std::mutex> lock(mu_);
        session_.session_id = event.info().session_id();
        session_.policy = event.info().policy();
        session_.mps_pipe_directory = event.info().mps_pipe_directory();
        session_.context_reserve_bytes = event.info().context_reserve_bytes();
        attached_ = true;
        attached_cv_.notify_all();
      }
      grpc::Status status = stream->Finish();
      std::lock_guard<std::mutex> lock(mu_);
      ended_ = true;
      end_status_ = status;
      attached_cv_.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu_);
    attached_cv_.wait_for(lock, timeout, [this] { return attached_ || ended_; });
    if (attached_) return absl::OkStatus();
    const std::string why = ended_ ? end_status_.error_message() : "no answer in time";
    return absl::UnavailableError(absl::StrCat("mgbd did not open a session: ", why));
  }

  const SessionDetails &details() const { return session_; }

  absl::StatusOr<Placement> Begin(uint64_t memory_bytes, const LaunchShape &shape,
                                  const std::string &label, const Deadline &deadline) {
    v1::TaskBeginRequest request;
    request.set_session_id(session_.session_id);
    request.set_memory_bytes(memory_bytes);
    ToProto(shape, request.mutable_shape());
    request.set_label(label);
    if (deadline) request.set_deadline_unix_ms(UnixMs(*deadline));
    grpc::ClientContext context;
    SetDeadline(context, deadline);
    v1::TaskBeginReply reply;
    if (grpc::Status st = stub_->TaskBegin(&context, request, &reply); !st.ok()) return FromGrpc(st);
    return Placement{reply.task_id(), reply.gpu_index(), reply.gpu_name(), reply.gpu_uuid(),
                     reply.pci_bus_id()};
  }

  absl::StatusOr<uint64_t> Grow(uint64_t task_id, uint64_t extra_bytes, const Deadline &deadline) {
    v1::TaskGrowRequest request;
    request.set_session_id(session_.session_id);
    request.set_task_id(task_id);
    request.set_extra_bytes(extra_bytes);
    if (deadline) request.set_deadline_unix_ms(UnixMs(*deadline));
    grpc::ClientContext context;
    SetDeadline(context, deadline);
    v1::TaskGrowReply reply;
    if (grpc::Status st = stub_->TaskGrow(&context, request, &reply); !st.ok()) return FromGrpc(st);
    return reply.memory_bytes();
  }

  absl::Status Usage(uint64_t task_id, uint64_t allocated_bytes) {
    v1::TaskUsageRequest request;
    request.set_session_id(session_.session_id);
    request.set_task_id(task_id);
    request.set_allocated_bytes(allocated_bytes);
    grpc::ClientContext context;
    v1::TaskUsageReply reply;
    return FromGrpc(stub_->TaskUsage(&context, request, &reply));
  }

  absl::StatusOr<uint64_t> Launch(uint64_t task_id, const LaunchShape &shape) {
    v1::TaskLaunchRequest request;
    request.set_session_id(session_.session_id);
    request.set_task_id(task_id);
    ToProto(shape, request.mutable_shape());
    grpc::ClientContext context;
    v1::TaskLaunchReply reply;
    if (grpc::Status st = stub_->TaskLaunch(&context, request, &reply); !st.ok()) return FromGrpc(st);
    return reply.warps();
  }

  absl::Status End(uint64_t task_id) {
    v1::TaskEndRequest request;
    request.set_session_id(session_.session_id);
    request.set_task_id(task_id);
    grpc::ClientContext context;
    v1::TaskEndReply reply;
    return FromGrpc(stub_->TaskEnd(&context, request, &reply));
  }

  absl::StatusOr<v1::StatusReply> Snapshot() {
    grpc::ClientContext context;
    v1::StatusReply reply;
    if (grpc::Status st = stub_->Status(&context, v1::StatusRequest(), &reply); !st.ok()) {
      return FromGrpc(st);
    }
    return reply;
  }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Scheduler::Stub> stub_;
  grpc::ClientContext attach_context_;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable attached_cv_;
  bool attached_ = false;
  bool ended_ = false;
  grpc::Status end_status_;
  SessionDetails session_;  // written once, before Open returns
};

GrpcClient &Impl(Client *client) { return *static_cast<GrpcClient *>(client); }
const GrpcClient &Impl(const Client *client) { return *static_cast<const GrpcClient *>(client); }

}  // namespace

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(const std::string &socket_path,
                                                        int64_t pid, const std::string &program,
                                                        std::chrono::milliseconds connect_timeout) {
  BlockSignals block;
  std::shared_ptr<grpc::Channel> channel = ChannelTo(socket_path);
  if (absl::Status st = WaitConnected(*channel, socket_path, connect_timeout); !st.ok()) return st;
  auto client = std::make_unique<GrpcClient>(std::move(channel));
  if (absl::Status st = client->Open(pid, program, connect_timeout); !st.ok()) return st;
  return std::unique_ptr<Client>(std::move(client));
}

Client::~Client() = default;

const SessionDetails &Client::session() const { return Impl(this).details(); }

absl::StatusOr<Placement> Client::TaskBegin(uint64_t memory_bytes, const LaunchShape &shape,
                                            const std::string &label, Deadline deadline) {
  return Impl(this).Begin(memory_bytes, shape, label, deadline);
}

absl::StatusOr<uint64_t> Client::TaskGrow(uint64_t task_id, uint64_t extra_bytes,
                                          Deadline deadline) {
  return Impl(this).Grow(task_id, extra_bytes, deadline);
}

absl::Status Client::TaskUsage(uint64_t task_id, uint64_t allocated_bytes) {
  return Impl(this).Usage(task_id, allocated_bytes);
}

absl::StatusOr<uint64_t> Client::TaskLaunch(uint64_t task_id, const LaunchShape &shape) {
  return Impl(this).Launch(task_id, shape);
}

absl::Status Client::TaskEnd(uint64_t task_id) { return Impl(this).End(task_id); }

absl::StatusOr<v1::StatusReply> Client::Status() { return Impl(this).Snapshot(); }

absl::StatusOr<v1::StatusReply> Client::StatusAt(const std::string &socket_path,
                                                 std::chrono::milliseconds timeout) {
  BlockSignals block;
  std::shared_ptr<grpc::Channel> channel = ChannelTo(socket_path);
  if (absl::Status st = WaitConnected(*channel, socket_path, timeout); !st.ok()) return st;
  std::unique_ptr<v1::Scheduler::Stub> stub = v1::Scheduler::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::StatusReply reply;
  if (grpc::Status st = stub->Status(&context, v1::StatusRequest(), &reply); !st.ok()) {
    return FromGrpc(st);
  }
  return reply;
}

absl::Status Client::WatchAt(const std::string &socket_path,
                             const std::function<bool(const v1::Event &)> &on_event,
                             std::chrono::milliseconds connect_timeout) {
  std::shared_ptr<grpc::Channel> channel;
  {
    BlockSignals block;
    channel = ChannelTo(socket_path);
    if (absl::Status st = WaitConnected(*channel, socket_path, connect_timeout); !st.ok()) return st;
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
  return status.ok() ? absl::UnavailableError("mgbd ended the event stream") : FromGrpc(status);
}

}  // namespace mgb
