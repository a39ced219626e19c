// Helpers for the service tests: temporary sockets, config GPUs, an in-process mgbd, and running
// programs with their output captured.
#ifndef MGB_TEST_SERVICE_TEST_SUPPORT_H
#define MGB_TEST_SERVICE_TEST_SUPPORT_H

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "daemon.h"

namespace mgb::test {

inline constexpr uint64_t kGiB = uint64_t{1} << 30;

// A fresh directory under /tmp, removed with its contents when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string &path() const { return path_; }
  std::string File(const std::string &name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Writes a --gpus file with `count` GPUs of `bytes` each (132 SMs) and returns its path.
std::string WriteGpuConfig(const TempDir &dir, int count, uint64_t bytes);

// Options for an mgbd on dir/mgbd.sock with `count` config GPUs of `bytes` each and no context
// reserve: what the tests start from.
server::DaemonOptions ConfigGpuOptions(const TempDir &dir, int count, uint64_t bytes);

// An in-process mgbd on dir/mgbd.sock with config GPUs.
struct TestDaemon {
  TempDir dir;
  std::unique_ptr<server::Daemon> daemon;
  std::string socket;
};
std::unique_ptr<TestDaemon> StartDaemon(int gpus, uint64_t bytes, const std::string &policy = "mgb",
                                        uint64_t context_reserve = 0,
                                        const server::ListenerLimits &limits = {});

// The same with options of the test's own (`adjust` changes ConfigGpuOptions's).
std::unique_ptr<TestDaemon> StartDaemonWith(
    int gpus, uint64_t bytes, const std::function<void(server::DaemonOptions &)> &adjust);

struct ProcessResult {
  int exit_code = -1;
  std::string out, err;
};
// Runs argv to completion with extra "NAME=value" environment entries.
ProcessResult RunProcess(const std::vector<std::string> &argv,
                         const std::vector<std::string> &extra_env = {});
// Starts argv in the background (stdout/stderr to /dev/null); returns its pid.
int StartProcess(const std::vector<std::string> &argv);

// Whether another user could reach `path`: every directory above it lets others through. Tests
// that run a program as another user skip themselves when not (a build under a private folder).
bool ReachableByOthers(const std::string &path);

// The whole file (empty if it cannot be read).
std::string ReadFile(const std::string &path);

// Polls `condition` until true or `limit` passed; returns the time it took (or limit).
std::chrono::milliseconds WaitFor(const std::function<bool()> &condition,
                                  std::chrono::milliseconds limit);

}  // namespace mgb::test

#endif  // MGB_TEST_SERVICE_TEST_SUPPORT_H
