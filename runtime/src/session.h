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

  // MGB_SOCKET (default /tmp/mgbd.sock); MGB_UNMANAGED=1|allow|yes|true -> kUnmanaged,
  // unset|0|no|false -> kExit; MGB_CONNECT_TIMEOUT_MS.
  static SessionConfig FromEnvironment();
};

class Session {
 public:
  explicit Session(SessionConfig config) : config_(std::move(config)) {}

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
  SessionConfig config_;
  std::once_flag connected_;
  std::shared_ptr<Client> client_;
  std::mutex mu_;
};

}  // namespace mgb::runtime

#endif  // MGB_RUNTIME_SRC_SESSION_H
