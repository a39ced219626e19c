#include "session.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <optional>

#include "mgb/core/byte_size.h"

namespace mgb::runtime {
namespace {

bool OneOf(const char *value, std::initializer_list<const char *> words) {
  for (const char *word : words) {
    if (strcasecmp(value, word) == 0) return true;
  }
  return false;
}

std::string ProgramName() {
  std::ifstream comm("/proc/self/comm");
  std::string name;
  if (std::getline(comm, name) && !name.empty()) return name;
  return "program";
}

// A size from the variable into `bytes`: a bare number is MiB (the variables end in _MB), else
// a size as on mgb's command lines ("512K", "2G"); unset keeps the default, a bad value is
// reported and ignored.
void MegabytesFromEnvironment(const char *name, size_t &bytes) {
  const char *value = std::getenv(name);
  if (value == nullptr) return;
  const std::string text = value;
  const bool bare = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  std::optional<uint64_t> parsed = core::ParseByteSize(bare ? text + "M" : text);
  if (parsed && *parsed < (uint64_t{1} << 60)) {
    bytes = static_cast<size_t>(*parsed);
  } else {
    std::fprintf(stderr, "mgb: %s=%s is not a size (a number of MiB, or e.g. 512K, 2G): ignored\n",
                 name, value);
  }
}

// An on/off variable: 1/yes/true/on (or one of `also_on`) is on; unset, empty or 0/no/false/off
// is off; anything else is reported and taken as off.
bool SwitchFromEnvironment(const char *name, std::initializer_list<const char *> also_on = {}) {
  const char *value = std::getenv(name);
  if (value == nullptr || *value == '\0') return false;
  if (OneOf(value, {"1", "yes", "true", "on"}) || OneOf(value, also_on)) return true;
  if (!OneOf(value, {"0", "no", "false", "off"})) {
    std::fprintf(stderr, "mgb: %s=%s is not one of 1/0, yes/no, true/false: using 0\n", name,
                 value);
  }
  return false;
}

}  // namespace

SessionConfig SessionConfig::FromEnvironment() {
  SessionConfig config;
  config.socket_path = SocketFromEnvironment();
  if (SwitchFromEnvironment("MGB_UNMANAGED", {"allow"})) config.policy = FailurePolicy::kUnmanaged;
  config.report_waits = SwitchFromEnvironment("MGB_REPORT_WAITS");
  config.trace = SwitchFromEnvironment("MGB_TRACE");
  if (const char *timeout = std::getenv("MGB_CONNECT_TIMEOUT_MS")) {
    char *end = nullptr;
    long ms = std::strtol(timeout, &end, 10);
    if (end != timeout && *end == '\0' && ms > 0) {
      config.connect_timeout = std::chrono::milliseconds(ms);
    } else {
      std::fprintf(stderr, "mgb: MGB_CONNECT_TIMEOUT_MS=%s is not a positive integer: ignored\n",
                   timeout);
    }
  }
  MegabytesFromEnvironment("MGB_CAPTURE_LIMIT_MB", config.capture_limit_bytes);
  MegabytesFromEnvironment("MGB_TASK_SLACK_MB", config.task_slack_bytes);
  MegabytesFromEnvironment("MGB_POINTER_SCAN_MB", config.pointer_scan_limit_bytes);
  config.eager = SwitchFromEnvironment("MGB_EAGER");
  config.program = ProgramName();
  return config;
}

// Under `mgb run` the driver-level guard (guard/) counts every allocation against the run's
// reservation, while libmgb reserves its tasks' memory in sessions of its own: the guard stands
// down so no byte is counted twice (docs/runtime.md, "The driver-level guard").
void Session::StandDownDriverGuard() {
  if (std::getenv("MGB_GUARD_DIR") == nullptr) return;
  using Disable = void (*)(const char *);
  if (auto disable = reinterpret_cast<Disable>(dlsym(RTLD_DEFAULT, "mgb_guard_disable"))) {
    disable("the program is rewritten: libmgb places its tasks");
  }
}

bool Session::Managed() {
  std::call_once(connected_, [this] {
    auto client =
        Client::Connect(config_.socket_path, getpid(), config_.program, config_.connect_timeout);
    if (!client.ok()) {
      Fail("cannot reach mgbd at " + config_.socket_path + " (" +
           client.status().ToString(absl::StatusToStringMode::kWithNoExtraData) + ")");
      return;
    }
    std::lock_guard lock(mu_);
    client_ = std::move(*client);
    // MPS clients must use mgbd's pipe directory; CUDA reads it when it initialises, which in a
    // rewritten program happens after this first libmgb call.
    const std::string &pipe = client_->session().mps_pipe_directory;
    if (!pipe.empty()) setenv("CUDA_MPS_PIPE_DIRECTORY", pipe.c_str(), /*overwrite=*/0);
    StandDownDriverGuard();
  });
  std::lock_guard lock(mu_);
  return client_ != nullptr;
}

void Session::Fail(const std::string &what) {
  if (config_.policy == FailurePolicy::kExit) {
    std::fprintf(stderr, "mgb: %s; exiting (set MGB_UNMANAGED=1 to run without mgbd)\n",
                 what.c_str());
    std::fflush(stderr);
    std::exit(kExitUnavailable);
  }
  std::fprintf(stderr, "mgb: %s; running unmanaged (MGB_UNMANAGED is set)\n", what.c_str());
  std::shared_ptr<Client> dropped;
  std::lock_guard lock(mu_);
  dropped = std::move(client_);
}

std::shared_ptr<Client> Session::client() {
  std::lock_guard lock(mu_);
  return client_;
}

void Session::Close() {
  std::shared_ptr<Client> closing;
  {
    std::lock_guard lock(mu_);
    closing = std::move(client_);
  }
}

}  // namespace mgb::runtime
