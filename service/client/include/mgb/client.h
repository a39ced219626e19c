// mgb::Client: a blocking C++ client of mgbd, shared by libmgb (runtime/) and the `mgb` command
// line. One Client is one session: constructing it opens the session (Attach), destroying it ends
// it.
#ifndef MGB_SERVICE_CLIENT_MGB_CLIENT_H
#define MGB_SERVICE_CLIENT_MGB_CLIENT_H

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mgb/core/error_reason.h"
#include "mgb/core/gpu.h"

namespace mgb::v1 {
class StatusReply;
class Event;
}  // namespace mgb::v1

namespace mgb {

// The socket clients use when neither --socket nor MGB_SOCKET names one: the system mgbd's (the
// package's mgbd.socket) when it is there, else the one a user starts by hand.
inline constexpr const char *kSystemSocket = "/run/mgbd/mgbd.sock";
inline constexpr const char *kDefaultSocket = "/tmp/mgbd.sock";
// MGB_SOCKET if set and non-empty, else kSystemSocket if it exists, else kDefaultSocket.
std::string SocketFromEnvironment();

// The scheduler's own description of a launch (mgb/core/gpu.h: plain types, no scheduler code).
using Dim3 = core::Dim3;
using LaunchShape = core::LaunchShape;

// Every call's error keeps mgbd's status code and carries mgbd's reason for it (docs/api.md,
// "Errors"): ReasonOf(status) == ErrorReason::kNoRoom, say. kUnspecified for errors that are not
// mgbd's refusals (no mgbd, a lost connection) and from an mgbd that sends none. Print a status
// with ToString(absl::StatusToStringMode::kWithNoExtraData) or message(): the reason is a payload.
using ErrorReason = core::ErrorReason;
using core::ReasonOf;

struct Placement {
  uint64_t task_id = 0;
  uint32_t gpu_index = 0;
  std::string gpu_name;
  std::string gpu_uuid;       // empty for GPUs from a config file
  std::string pci_bus_id;     // empty for GPUs from a config file
  uint64_t memory_bytes = 0;  // the reservation granted (mgbd's choice for TaskBeginProfiled)
};

struct SessionDetails {
  std::string session_id;
  std::string policy;
  std::string mps_pipe_directory;  // empty without MPS
  uint64_t context_reserve_bytes = 0;
  std::string mgbd_version;  // empty from an mgbd older than the field
};

using Deadline = std::optional<std::chrono::system_clock::time_point>;

class Client {
 public:
  // Connects to mgbd at socket_path and opens a session; fails (UNAVAILABLE, naming the socket)
  // within connect_timeout when mgbd is not there, never hangs.
  static absl::StatusOr<std::unique_ptr<Client>> Connect(
      const std::string &socket_path, int64_t pid, const std::string &program,
      std::chrono::milliseconds connect_timeout = std::chrono::milliseconds(2000));

  virtual ~Client();  // ends the session: mgbd releases what it still holds

  const SessionDetails &session() const;

  // The GPUs (PCI bus ids) this process can open: every later TaskBegin is placed only on one of
  // them (TaskBeginRequest.visible_pci_bus_ids). Empty (the default): any GPU.
  void SetVisibleGpus(std::vector<std::string> pci_bus_ids);

  // Blocks until mgbd placed the task (or the deadline passed: DEADLINE_EXCEEDED).
  // preferred_pci_bus_id: TaskBeginRequest's (the GPU the process's earlier CUDA objects are on).
  absl::StatusOr<Placement> TaskBegin(uint64_t memory_bytes, const LaunchShape &shape,
                                      const std::string &label, Deadline deadline = std::nullopt,
                                      const std::string &preferred_pci_bus_id = "");
  // TaskBegin for a known program (profile_key: `mgb run`'s executable and script; arguments:
  // its whole command line, a hint): with memory_bytes 0, mgbd reserves what this user's last
  // finished run of it peaked at (plus 1/16), else its --run-default-mem; Placement::memory_bytes
  // says what. TaskUsage and TaskEnd teach mgbd the run's peak. docs/service.md, "Learned peaks".
  absl::StatusOr<Placement> TaskBeginProfiled(const std::string &profile_key, uint64_t memory_bytes,
                                              const LaunchShape &shape, const std::string &label,
                                              Deadline deadline = std::nullopt,
                                              const std::string &profile_arguments = "");
  // Blocks until the task's GPU has extra_bytes more for it; returns the new reservation.
  absl::StatusOr<uint64_t> TaskGrow(uint64_t task_id, uint64_t extra_bytes,
                                    Deadline deadline = std::nullopt);
  // The task has allocated_bytes of its reservation now, and at most peak_bytes at once so far
  // (0: not known); mgbd learns the larger of the two as the run's peak.
  // room_bytes, when given, gets the most the task could hold on its GPU now (0: not known).
  absl::Status TaskUsage(uint64_t task_id, uint64_t allocated_bytes, uint64_t peak_bytes = 0,
                         uint64_t *room_bytes = nullptr);
  // The task launched `shape`; mgbd counts it if it is wider than the task's. Returns the warps
  // mgbd counts for the task.
  absl::StatusOr<uint64_t> TaskLaunch(uint64_t task_id, const LaunchShape &shape);
  // Releases the task without waiting for mgbd's answer (a decision costs one round trip: the
  // TaskBegin); NOT_FOUND for a task this client does not hold. mgbd's rare refusal is printed.
  absl::Status TaskEnd(uint64_t task_id);
  // Waits until mgbd has answered every TaskEnd sent so far (Status() and the destructor do).
  void Flush();

  absl::StatusOr<v1::StatusReply> Status();

  // A client of its own for tools that only read Status (no session is opened).
  static absl::StatusOr<v1::StatusReply> StatusAt(
      const std::string &socket_path,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

  // Slurm's hooks (root only; docs/slurm.md): job `job_id`'s processes may reserve up to
  // memory_bytes here; and the job ended (its sessions end; answers how many were open).
  static absl::Status JobBeginAt(
      const std::string &socket_path, uint64_t job_id, uint64_t memory_bytes,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));
  static absl::StatusOr<uint32_t> JobEndAt(
      const std::string &socket_path, uint64_t job_id,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

  // For tools: streams mgbd's scheduling events to on_event until it returns false (OK) or the
  // stream breaks (UNAVAILABLE). No session is opened.
  static absl::Status WatchAt(
      const std::string &socket_path, const std::function<bool(const v1::Event &)> &on_event,
      std::chrono::milliseconds connect_timeout = std::chrono::milliseconds(2000));

  Client(const Client &) = delete;
  Client &operator=(const Client &) = delete;

 protected:
  Client() = default;
};

}  // namespace mgb

#endif  // MGB_SERVICE_CLIENT_MGB_CLIENT_H
