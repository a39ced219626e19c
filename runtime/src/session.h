// Session: libmgb's one connection to mgbd per runtime (per process for the C API), opened at first
// use. When mgbd cannot be reached it prints one line and then, following the failure policy,
// either exits the program or lets it run unmanaged (every mgb_cudaX is then plain cudaX).
#ifndef MGB_RUNTIME_SRC_SESSION_H
#define MGB_RUNTIME_SRC_SESSION_H

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "mgb/client.h"

namespace mgb::runtime {

// What libmgb does when mgbd is unreachable or refuses a task.
enum class FailurePolicy {
  kExit,       // print the reason and exit(kExitUnavailable): the default (see docs/runtime.md)
  kUnmanaged,  // print the reason and run on without mgbd
};

inline constexpr int kExitUnavailable = 69;  // EX_UNAVAILABLE

struct SessionConfig {
  std::string socket_path;
  FailurePolicy policy = FailurePolicy::kExit;
  std::chrono::milliseconds connect_timeout{2000};
  std::string program = "program";
  // Host bytes the lazy layer may hold as captured copies for buffers not yet on a GPU; a copy
  // that would pass it places its buffers at once instead (a program uploading a 50 GB input
  // before its first launch must not need 50 GB more of host memory).
  size_t capture_limit_bytes = size_t(256) << 20;
  // Bytes every task reserves beyond its stated memory and heap, for the small buffers programs
  // allocate once a task is placed (result counters, flags): without it each needs a TaskGrow,
  // and on a full GPU it waits behind larger grows (the evaluation lost a 91 GiB job to an
  // 8-byte one). CUDA rounds such allocations up to 2 MiB pages anyway.
  size_t task_slack_bytes = size_t(2) << 20;
  // Mapped granules on each side of every span of reserved addresses (runtime_spans.cpp): an access
  // just past a buffer's ends lands in memory, as it does next to cudaMalloc's allocations.
  size_t span_margin_granules = 1;
  // Host bytes a copy into device memory may have for them to be scanned for stand-in
  // addresses (a host array of device pointers must reach the device translated); larger copies
  // go as they are. 1 MiB holds 131,072 pointers, more than batched library calls take; input
  // streamed in through a staging buffer of several MiB is not scanned (the scan reads host
  // memory about as fast as the copy moves it: it would double an input phase).
  size_t pointer_scan_limit_bytes = size_t(1) << 20;
  // MGB_TRACE=1: one stderr line per task placement, binding and end (which GPU, which device),
  // to explain a program that misbehaves managed (docs/runtime.md).
  bool trace = false;
  // Bind every allocation eagerly from the start (as code mgb cannot see makes it do).
  bool eager = false;
  // Print the wait clock (MGB_WAIT_MS) at exit: off by default, so a managed program's output
  // is the program's own; `mgb batch` turns it on for its jobs.
  bool report_waits = false;

  // MGB_SOCKET (default /tmp/mgbd.sock); MGB_UNMANAGED=1|allow|yes|true -> kUnmanaged,
  // unset|0|no|false -> kExit; MGB_CONNECT_TIMEOUT_MS; MGB_CAPTURE_LIMIT_MB; MGB_TASK_SLACK_MB;
  // MGB_REPORT_WAITS=1|yes|true|on -> report_waits; MGB_POINTER_SCAN_MB; MGB_EAGER=1 -> eager.
  static SessionConfig FromEnvironment();
};

class Session {
 public:
  explicit Session(SessionConfig config) : config_(std::move(config)) {}
  const SessionConfig &Config() const { return config_; }

  // Connects on the first call; false when the program runs unmanaged. May exit the program.
  bool Managed();
  // The client, or null when unmanaged. Managed() must have been called. Shared: a failure on
  // another thread may drop the session while a call is in flight.
  std::shared_ptr<Client> client();
  const SessionConfig &config() const { return config_; }

  // A libmgb failure concerning mgbd: prints "mgb: <what>" and applies the policy; returns
  // normally only under kUnmanaged (and then the session is unmanaged from now on).
  void Fail(const std::string &what);

  // Ends the session (mgbd releases what it still holds). Safe to call twice.
  void Close();

 private:
  static void StandDownDriverGuard();
  SessionConfig config_;
  std::once_flag connected_;
  std::shared_ptr<Client> client_;
  std::mutex mu_;
};

}  // namespace mgb::runtime

#endif  // MGB_RUNTIME_SRC_SESSION_H
