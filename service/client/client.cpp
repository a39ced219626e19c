// mgb::Client over gRPC: a blocking API; the session is an Attach stream read by a background
// thread that takes none of the application's signals.
#include "mgb/client.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "error_reasons.h"
#include "client_channel.h"
#include "lane_client.h"
#include "mgb.grpc.pb.h"

namespace mgb {

std::string SocketFromEnvironment() {
  const char *env = std::getenv("MGB_SOCKET");
  if (env != nullptr && *env != '\0') return env;
  return access(kSystemSocket, F_OK) == 0 ? kSystemSocket : kDefaultSocket;
}

namespace {

// A refusal of the request itself by a live session: there is no lost session to wait for. An
// unknown session or task may come from an mgbd that restarted, and a session or job end ends the
// session: those still wait to see whether it broke.
bool RefusedByLiveSession(const absl::Status &status) {
  switch (core::ReasonOf(status)) {
    case core::ErrorReason::kInvalidField:
    case core::ErrorReason::kNeverFits:
    case core::ErrorReason::kTaskWaiting:
    case core::ErrorReason::kGrowPending:
    case core::ErrorReason::kDeadline:
    case core::ErrorReason::kNoRoom:
    case core::ErrorReason::kJobGrantExceeded:
    case core::ErrorReason::kNoJobGrant:
    case core::ErrorReason::kPermissionDenied:
    case core::ErrorReason::kSlurmDisabled: return true;
    default: return false;
  }
}

int64_t UnixMs(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

// How long after a call's deadline the client itself gives up: mgbd answers at the deadline.
constexpr std::chrono::seconds kDeadlineSafetyMargin(2);

// gRPC's own deadline is a safety net a little after mgbd's (which answers DEADLINE_EXCEEDED).
void SetDeadline(grpc::ClientContext &context, const Deadline &deadline) {
  if (deadline) context.set_deadline(*deadline + kDeadlineSafetyMargin);
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
  out->set_shared_memory_per_block_bytes(shape.shared_bytes_per_block);
}

// The lane's own limit on waiting for a TaskBegin's answer: mgbd answers at the deadline itself.
LaneClient::Until LaneSafetyNet(const Deadline &deadline) {
  if (!deadline) return std::nullopt;
  return std::chrono::steady_clock::now() + (*deadline - std::chrono::system_clock::now()) +
         kDeadlineSafetyMargin;
}

// How long a call waits for mgbd to come back after it went away (MGB_RECONNECT_SECONDS).
std::chrono::milliseconds ReconnectPatience() {
  const char *env = std::getenv("MGB_RECONNECT_SECONDS");
  const long seconds = env != nullptr && *env != '\0' ? std::strtol(env, nullptr, 10) : 60;
  return std::chrono::seconds(seconds > 0 ? seconds : 60);
}

// MGB_QUEUE_PRIORITY: the session's place in mgbd's wait queue where mgbd honours it (mgbd
// --queue-priority). Unset: 0. Not a whole number 0-65535: said once on stderr, and 0.
uint32_t QueuePriority() {
  const char *env = std::getenv("MGB_QUEUE_PRIORITY");
  if (env == nullptr || *env == '\0') return 0;
  char *end = nullptr;
  errno = 0;
  const long value = std::strtol(env, &end, 10);
  if (errno != 0 || *end != '\0' || value < 0 || value > 65535) {
    std::fprintf(stderr,
                 "libmgb: MGB_QUEUE_PRIORITY '%s' is not a whole number from 0 to 65535; "
                 "using 0\n",
                 env);
    return 0;
  }
  return static_cast<uint32_t>(value);
}

// One session with one mgbd: the channel, its stub and the session id it gave.
struct Connection {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<v1::Scheduler::Stub> stub;
  std::string session_id;
  uint64_t generation = 0;  // counts sessions opened by this client: 1, then one per reconnect
  std::unique_ptr<LanePool> lanes;  // TaskBegin and TaskEnd off gRPC; null: MGB_FAST_LANE=0
};

// A task this client holds, as it would describe it to an mgbd that lost it.
struct HeldTask {
  uint64_t server_id = 0;  // the current mgbd's id; 0 when it could not be restored there
  uint32_t gpu = 0;
  uint64_t memory = 0;  // the reservation as last granted
  LaunchShape shape;
  std::string label;
  std::string token;  // mgbd's proof of the grant, for the next mgbd (restore_tokens.h)
};

// A TaskEnd on its way: kept alive by its callback until mgbd answered.
struct EndCall {
  std::shared_ptr<Connection> connection;
  grpc::ClientContext context;
  v1::TaskEndRequest request;
  v1::TaskEndReply reply;
};

// How long a release may take before its call gives up (the session's end releases it anyway).
constexpr std::chrono::seconds kEndPatience(10);

// The session survives mgbd restarts: when the Attach stream breaks, the reader thread keeps
// what the program holds, reconnects with backoff, and re-registers the held tasks (their GPUs
// and reservations) in the new Attach; calls made meanwhile wait for it (MGB_RECONNECT_SECONDS).
// Task ids handed out stay valid across the restart (they are this client's, mapped to mgbd's).
class GrpcClient final : public Client {
 public:
  // first_channel: the one Connect found mgbd on, used for the first Attach.
  GrpcClient(std::shared_ptr<grpc::Channel> first_channel, std::string socket_path, int64_t pid,
             std::string program)
      : first_channel_(std::move(first_channel)),
        socket_path_(std::move(socket_path)),
        pid_(pid),
        program_(std::move(program)),
        queue_priority_(QueuePriority()) {}

  ~GrpcClient() override {
    Flush();  // the answers' callbacks use this object (each call has a deadline)
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
      if (attach_context_ != nullptr) attach_context_->TryCancel();
      cv_.notify_all();
    }
    if (reader_.joinable()) reader_.join();
  }

  absl::Status Open(std::chrono::milliseconds timeout) {
    reader_ = std::thread([this] { AttachLoop(); });
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [this] { return current_ != nullptr || failed_; });
    if (current_ != nullptr) return absl::OkStatus();
    const std::string why =
        failed_ ? std::string(first_failure_.message()) : std::string("no answer in time");
    const std::string message = absl::StrCat("mgbd did not open a session: ", why);
    // mgbd's own refusal (a user's session limit) keeps its code and reason.
    if (failed_ && core::ReasonOf(first_failure_) != core::ErrorReason::kUnspecified) {
      return core::WithReason(absl::Status(first_failure_.code(), message),
                              core::ReasonOf(first_failure_));
    }
    return absl::UnavailableError(message);
  }

  const SessionDetails &details() const { return session_; }

  absl::StatusOr<Placement> Begin(uint64_t memory_bytes, const LaunchShape &shape,
                                  const std::string &label, const Deadline &deadline,
                                  const std::string &preferred_pci_bus_id,
                                  const std::string &profile_key,
                                  const std::string &profile_arguments = "") {
    v1::TaskBeginReply reply;
    absl::Status st = Call(deadline, [&](Connection &c) {
      v1::TaskBeginRequest request;
      request.set_session_id(c.session_id);
      request.set_memory_bytes(memory_bytes);
      ToProto(shape, request.mutable_shape());
      request.set_label(label);
      request.set_preferred_pci_bus_id(preferred_pci_bus_id);
      request.set_profile_key(profile_key);
      request.set_profile_arguments(profile_arguments);
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (const std::string &id : visible_gpus_) request.add_visible_pci_bus_ids(id);
      }
      if (deadline) request.set_deadline_unix_ms(UnixMs(*deadline));
      if (c.lanes != nullptr) {
        std::optional<absl::StatusOr<v1::TaskBeginReply>> answer =
            c.lanes->Begin(request, LaneSafetyNet(deadline));
        if (answer && answer->ok()) {
          reply = std::move(**answer);
          return absl::OkStatus();
        }
        // mgbd's refusal is the answer. A lane that broke (mgbd killed, say) may have noticed
        // before the session did: gRPC's call below then fails as the session breaks, and Call
        // repeats it on the next session.
        if (answer && answer->status().code() != absl::StatusCode::kUnavailable) {
          return answer->status();
        }
      }
      grpc::ClientContext context;
      SetDeadline(context, deadline);
      return FromGrpc(c.stub->TaskBegin(&context, request, &reply), context);
    });
    if (!st.ok()) return st;
    std::lock_guard<std::mutex> lock(mu_);
    // The id mgbd gave while it is the first mgbd; after a restart its ids start again low.
    const uint64_t local = std::max<uint64_t>(reply.task_id(), last_local_ + 1);
    last_local_ = local;
    // An older mgbd does not say what it granted: what was asked.
    const uint64_t granted = reply.memory_bytes() != 0 ? reply.memory_bytes() : memory_bytes;
    held_[local] =
        HeldTask{reply.task_id(), reply.gpu_index(), granted, shape, label, reply.restore_token()};
    return Placement{
        local, reply.gpu_index(), reply.gpu_name(), reply.gpu_uuid(), reply.pci_bus_id(), granted};
  }

  absl::StatusOr<uint64_t> Grow(uint64_t task_id, uint64_t extra_bytes, const Deadline &deadline) {
    v1::TaskGrowReply reply;
    absl::Status st = Call(
        deadline,
        [&](Connection &c) {
          v1::TaskGrowRequest request;
          request.set_session_id(c.session_id);
          request.set_task_id(ServerId(task_id));
          request.set_extra_bytes(extra_bytes);
          if (deadline) request.set_deadline_unix_ms(UnixMs(*deadline));
          grpc::ClientContext context;
          SetDeadline(context, deadline);
          return FromGrpc(c.stub->TaskGrow(&context, request, &reply), context);
        },
        task_id);
    if (!st.ok()) return st;
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = held_.find(task_id); it != held_.end()) {
      it->second.memory = reply.memory_bytes();
      it->second.token = reply.restore_token();
    }
    return reply.memory_bytes();
  }

  absl::Status Usage(uint64_t task_id, uint64_t allocated_bytes, uint64_t peak_bytes,
                     uint64_t *room_bytes) {
    if (room_bytes != nullptr) *room_bytes = 0;
    if (!Attached()) return Held(task_id) ? absl::OkStatus() : UnknownTask(task_id);  // dropped
    v1::TaskUsageReply reply;
    absl::Status st = Call(
        std::nullopt,
        [&](Connection &c) {
          v1::TaskUsageRequest request;
          request.set_session_id(c.session_id);
          request.set_task_id(ServerId(task_id));
          request.set_allocated_bytes(allocated_bytes);
          request.set_peak_bytes(peak_bytes);
          grpc::ClientContext context;
          return FromGrpc(c.stub->TaskUsage(&context, request, &reply), context);
        },
        task_id);
    if (st.ok() && room_bytes != nullptr) *room_bytes = reply.room_bytes();
    return st;
  }

  absl::StatusOr<uint64_t> Launch(uint64_t task_id, const LaunchShape &shape) {
    v1::TaskLaunchReply reply;
    absl::Status st = Call(
        std::nullopt,
        [&](Connection &c) {
          v1::TaskLaunchRequest request;
          request.set_session_id(c.session_id);
          request.set_task_id(ServerId(task_id));
          ToProto(shape, request.mutable_shape());
          grpc::ClientContext context;
          return FromGrpc(c.stub->TaskLaunch(&context, request, &reply), context);
        },
        task_id);
    if (!st.ok()) return st;
    return reply.warps();
  }

  // Sends the release and returns: the program goes on while it reaches mgbd (one round trip per
  // decision, the TaskBegin's). Flush() waits for the answers; a refusal is printed.
  absl::Status End(uint64_t task_id) {
    std::shared_ptr<Connection> connection;
    v1::TaskEndRequest request;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = held_.find(task_id);
      if (it == held_.end()) return UnknownTask(task_id);
      const uint64_t server_id = it->second.server_id;
      held_.erase(it);  // from now on never restored
      // Without mgbd (or unknown to this one) there is nothing to release: it is not re-registered.
      if (current_ == nullptr || server_id == 0) return absl::OkStatus();
      connection = current_;
      request.set_session_id(connection->session_id);
      request.set_task_id(server_id);
    }
    if (connection->lanes != nullptr) {
      std::optional<absl::Status> sent = connection->lanes->End(request);
      if (sent && sent->ok()) return absl::OkStatus();
      // Not sent on the lane: gRPC's call below (a lost session released the task anyway).
    }
    auto call = std::make_shared<EndCall>();
    call->connection = connection;
    call->request = request;
    call->context.set_deadline(std::chrono::system_clock::now() + kEndPatience);
    {
      std::lock_guard<std::mutex> lock(mu_);
      ends_in_flight_[task_id] = call;
    }
    call->connection->stub->async()->TaskEnd(
        &call->context, &call->request, &call->reply,
        [this, call, task_id](grpc::Status st) { EndAnswered(task_id, *call, st); });
    return absl::OkStatus();
  }

  void Flush() {
    std::shared_ptr<Connection> connection;
    {
      std::lock_guard<std::mutex> lock(mu_);
      connection = current_;
    }
    if (connection != nullptr && connection->lanes != nullptr) {
      connection->lanes->Flush(std::chrono::steady_clock::now() + kEndPatience);
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return ends_in_flight_.empty(); });
  }

  absl::StatusOr<v1::StatusReply> Snapshot() {
    Flush();  // the program's own releases show in what it reads
    v1::StatusReply reply;
    absl::Status st = Call(std::nullopt, [&](Connection &c) {
      grpc::ClientContext context;
      return FromGrpc(c.stub->Status(&context, v1::StatusRequest(), &reply), context);
    });
    if (!st.ok()) return st;
    return reply;
  }

 private:
  // The session's life: Attach, read until the stream breaks, then (unless closing, or the first
  // Attach failed) reconnect with backoff and Attach again with the tasks still held.
  void AttachLoop() {
    std::chrono::milliseconds backoff(50);
    bool attached_once = false;
    for (;;) {
      auto connection = std::make_shared<Connection>();
      connection->channel =
          first_channel_ != nullptr ? std::move(first_channel_) : ChannelTo(socket_path_);
      first_channel_ = nullptr;
      connection->stub = v1::Scheduler::NewStub(connection->channel);
      if (FastLaneWanted()) connection->lanes = std::make_unique<LanePool>(socket_path_, program_);
      v1::AttachRequest request;
      request.set_pid(pid_);
      request.set_program(program_);
      request.set_queue_priority(queue_priority_);
      std::vector<uint64_t> restoring;  // local ids, in request.restore order
      grpc::ClientContext context;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (closing_) return;
        for (const auto &[local, task] : held_) {
          v1::RestoredTask *r = request.add_restore();
          r->set_gpu_index(task.gpu);
          r->set_memory_bytes(task.memory);
          ToProto(task.shape, r->mutable_shape());
          r->set_label(task.label);
          r->set_token(task.token);
          restoring.push_back(local);
        }
        attach_context_ = &context;
      }
      std::unique_ptr<grpc::ClientReader<v1::SessionEvent>> stream =
          connection->stub->Attach(&context, request);
      v1::SessionEvent event;
      while (stream->Read(&event)) {
        if (!event.has_info()) continue;
        const v1::SessionInfo &info = event.info();
        std::lock_guard<std::mutex> lock(mu_);
        connection->session_id = info.session_id();
        connection->generation = ++generation_;
        if (!attached_once) {
          session_.session_id = info.session_id();
          session_.policy = info.policy();
          session_.mps_pipe_directory = info.mps_pipe_directory();
          session_.context_reserve_bytes = info.context_reserve_bytes();
          session_.mgbd_version = info.mgbd_version();
        } else {
          size_t restored = 0;
          for (size_t i = 0; i < restoring.size(); ++i) {
            auto it = held_.find(restoring[i]);
            if (it == held_.end()) continue;
            it->second.server_id = i < static_cast<size_t>(info.restored_task_ids_size())
                                       ? info.restored_task_ids(i)
                                       : 0;
            it->second.token = i < static_cast<size_t>(info.restored_task_tokens_size())
                                   ? info.restored_task_tokens(i)
                                   : std::string();
            if (it->second.server_id != 0) ++restored;
          }
          // A task mgbd refused to restore runs on, unaccounted: say so.
          std::fprintf(stderr,
                       "mgb: %s re-registered with mgbd at %s (%zu of %zu held tasks restored)\n",
                       program_.c_str(), socket_path_.c_str(), restored, restoring.size());
        }
        attached_once = true;
        backoff = std::chrono::milliseconds(50);
        current_ = connection;
        cv_.notify_all();
      }
      const absl::Status status = FromGrpc(stream->Finish(), context);
      std::unique_lock<std::mutex> lock(mu_);
      attach_context_ = nullptr;
      current_ = nullptr;
      cv_.notify_all();
      if (closing_) return;
      // ABORTED: mgbd ended the session on purpose (its Slurm job ended): nothing to come back to.
      if (!attached_once || status.code() == absl::StatusCode::kAborted) {
        if (attached_once) {
          std::fprintf(stderr, "mgb: %s: mgbd at %s ended its session (%s)\n", program_.c_str(),
                       socket_path_.c_str(), std::string(status.message()).c_str());
        }
        failed_ = true;
        first_failure_ = status;
        cv_.notify_all();
        return;
      }
      if (connection->generation != 0) {  // this attempt had a session: report its loss once
        std::fprintf(
            stderr,
            "mgb: %s lost mgbd at %s (%s); keeping the %zu tasks it holds and reconnecting\n",
            program_.c_str(), socket_path_.c_str(), std::string(status.message()).c_str(),
            held_.size());
      }
      cv_.wait_for(lock, backoff, [this] { return closing_; });
      if (closing_) return;
      backoff = std::min(backoff * 2, std::chrono::milliseconds(500));
    }
  }

  // Runs rpc on the current connection; after a loss (the call failed and the session broke, or
  // the mgbd behind the socket is a new one), waits for the reconnect and runs it again.
  template <class Rpc>
  absl::Status Call(const Deadline &deadline, Rpc &&rpc,
                    std::optional<uint64_t> task = std::nullopt) {
    const auto give_up =
        deadline ? *deadline : std::chrono::system_clock::now() + ReconnectPatience();
    for (int attempt = 0;; ++attempt) {
      std::shared_ptr<Connection> connection;
      std::optional<absl::Status> ended;  // the session ended for good (see the Attach loop)
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait_until(lock, give_up,
                       [this] { return current_ != nullptr || closing_ || failed_; });
        connection = current_;
        if (task && held_.count(*task) == 0) return UnknownTask(*task);
        if (connection == nullptr && failed_) ended = first_failure_;
      }
      if (ended) return *ended;
      if (connection == nullptr) {
        return absl::UnavailableError(
            absl::StrCat("mgbd at ", socket_path_, " went away and did not come back in time"));
      }
      absl::Status st = rpc(*connection);
      if (st.ok() || attempt >= 3 || RefusedByLiveSession(st) || !LostSince(connection->generation))
        return st;
    }
  }

  // On a gRPC thread: never blocks. A lost session released the task anyway.
  void EndAnswered(uint64_t task_id, const EndCall &call, const grpc::Status &st) {
    if (!st.ok() && st.error_code() != grpc::StatusCode::UNAVAILABLE &&
        st.error_code() != grpc::StatusCode::CANCELLED) {
      std::fprintf(stderr, "mgb: %s: mgbd did not end task %llu (its task %llu): %s\n",
                   program_.c_str(), static_cast<unsigned long long>(task_id),
                   static_cast<unsigned long long>(call.request.task_id()),
                   st.error_message().c_str());
    }
    std::lock_guard<std::mutex> lock(mu_);
    ends_in_flight_.erase(task_id);
    cv_.notify_all();
  }

  // Whether the session of `generation` broke (waiting a moment for the reader to notice).
  bool LostSince(uint64_t generation) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(500),
                 [&] { return current_ == nullptr || generation_ != generation || closing_; });
    return current_ == nullptr || generation_ != generation;
  }

  bool Attached() {
    std::lock_guard<std::mutex> lock(mu_);
    return current_ != nullptr;
  }
  bool Held(uint64_t task) {
    std::lock_guard<std::mutex> lock(mu_);
    return held_.count(task) != 0;
  }
  uint64_t ServerId(uint64_t task) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(task);
    return it != held_.end() ? it->second.server_id : 0;
  }
  static absl::Status UnknownTask(uint64_t task) {
    return core::Refusal(core::ErrorReason::kUnknownTask,
                         absl::StrCat("task_id: no task ", task, " held by this session"));
  }

  std::shared_ptr<grpc::Channel> first_channel_;  // the reader thread's, until its first Attach
  const std::string socket_path_;
  const int64_t pid_;
  const std::string program_;
  const uint32_t queue_priority_;  // MGB_QUEUE_PRIORITY, sent in every Attach
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<Connection> current_;  // null while there is no session (lost, or closing)
  grpc::ClientContext *attach_context_ = nullptr;
  uint64_t generation_ = 0;
  bool closing_ = false;
  bool failed_ = false;  // the first Attach failed: there is no session to keep
  absl::Status first_failure_;
  std::map<uint64_t, HeldTask> held_;                            // by this client's task id
  std::map<uint64_t, std::shared_ptr<EndCall>> ends_in_flight_;  // by this client's task id
  uint64_t last_local_ = 0;
  SessionDetails session_;                 // written once, before Open returns
  std::vector<std::string> visible_gpus_;  // Client::SetVisibleGpus

 public:
  void SetVisibleGpus(std::vector<std::string> pci_bus_ids) {
    std::lock_guard<std::mutex> lock(mu_);
    visible_gpus_ = std::move(pci_bus_ids);
  }
};

GrpcClient &Impl(Client *client) { return *static_cast<GrpcClient *>(client); }
const GrpcClient &Impl(const Client *client) { return *static_cast<const GrpcClient *>(client); }

}  // namespace

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(const std::string &socket_path, int64_t pid,
                                                        const std::string &program,
                                                        std::chrono::milliseconds connect_timeout) {
  BlockSignals block;
  std::shared_ptr<grpc::Channel> channel = ChannelTo(socket_path);
  if (absl::Status st = WaitConnected(*channel, socket_path, connect_timeout); !st.ok()) return st;
  auto client = std::make_unique<GrpcClient>(std::move(channel), socket_path, pid, program);
  if (absl::Status st = client->Open(connect_timeout); !st.ok()) return st;
  return std::unique_ptr<Client>(std::move(client));
}

Client::~Client() = default;

const SessionDetails &Client::session() const { return Impl(this).details(); }

void Client::SetVisibleGpus(std::vector<std::string> pci_bus_ids) {
  Impl(this).SetVisibleGpus(std::move(pci_bus_ids));
}

absl::StatusOr<Placement> Client::TaskBegin(uint64_t memory_bytes, const LaunchShape &shape,
                                            const std::string &label, Deadline deadline,
                                            const std::string &preferred_pci_bus_id) {
  return Impl(this).Begin(memory_bytes, shape, label, deadline, preferred_pci_bus_id, "");
}

absl::StatusOr<Placement> Client::TaskBeginProfiled(const std::string &profile_key,
                                                    uint64_t memory_bytes, const LaunchShape &shape,
                                                    const std::string &label, Deadline deadline,
                                                    const std::string &profile_arguments) {
  return Impl(this).Begin(memory_bytes, shape, label, deadline, "", profile_key, profile_arguments);
}

absl::StatusOr<uint64_t> Client::TaskGrow(uint64_t task_id, uint64_t extra_bytes,
                                          Deadline deadline) {
  return Impl(this).Grow(task_id, extra_bytes, deadline);
}

absl::Status Client::TaskUsage(uint64_t task_id, uint64_t allocated_bytes, uint64_t peak_bytes,
                               uint64_t *room_bytes) {
  return Impl(this).Usage(task_id, allocated_bytes, peak_bytes, room_bytes);
}

absl::StatusOr<uint64_t> Client::TaskLaunch(uint64_t task_id, const LaunchShape &shape) {
  return Impl(this).Launch(task_id, shape);
}

absl::Status Client::TaskEnd(uint64_t task_id) { return Impl(this).End(task_id); }

void Client::Flush() { Impl(this).Flush(); }

absl::StatusOr<v1::StatusReply> Client::Status() { return Impl(this).Snapshot(); }

}  // namespace mgb
