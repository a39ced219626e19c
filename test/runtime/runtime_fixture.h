// Test fixtures for libmgb: a real mgbd process on a temporary socket (config GPUs), and a Runtime
// over a FakeCudaApi connected to it.
#ifndef MGB_TEST_RUNTIME_RUNTIME_FIXTURE_H
#define MGB_TEST_RUNTIME_RUNTIME_FIXTURE_H

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fake_cuda.h"
#include "mgb.pb.h"
#include "runtime.h"

namespace mgb::test {

inline constexpr uint64_t kMiB = uint64_t{1} << 20;

struct ManagedRuntime;

// mgbd (the binary built by this tree) serving GPUs of the given sizes; killed at destruction.
class MgbdProcess {
 public:
  // spread_tasks: mgbd --spread-tasks, for tests of a process's tasks on several GPUs at once.
  explicit MgbdProcess(std::vector<uint64_t> gpu_memory, const std::string &policy = "mgb",
                       bool spread_tasks = false);
  ~MgbdProcess();
  const std::string &socket() const { return socket_; }
  // What mgbd holds once the runtimes of this test (ManagedRuntime) delivered their releases:
  // a task's end reaches mgbd just after TaskEnd returns.
  v1::StatusReply Status() const;

 private:
  friend struct ManagedRuntime;
  std::string dir_, socket_;
  pid_t pid_ = -1;
  mutable std::vector<const ManagedRuntime *> runtimes_;
};

// A Runtime over a fresh fake with `devices` GPUs, connected to `mgbd`.
struct ManagedRuntime {
  ManagedRuntime(const MgbdProcess &mgbd, int devices = 2);
  ManagedRuntime(const MgbdProcess &mgbd, int devices, runtime::SessionConfig config);
  ~ManagedRuntime();
  ManagedRuntime(const ManagedRuntime &) = delete;
  ManagedRuntime &operator=(const ManagedRuntime &) = delete;
  FakeCudaApi fake;
  std::unique_ptr<runtime::Runtime> runtime;
  const MgbdProcess *server;  // flushes this runtime before its Status()
};

runtime::SessionConfig TestConfig(const std::string &socket,
                                  runtime::FailurePolicy policy = runtime::FailurePolicy::kExit);

}  // namespace mgb::test

#endif  // MGB_TEST_RUNTIME_RUNTIME_FIXTURE_H
