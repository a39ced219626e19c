#include "runtime_fixture.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace mgb::test {

MgbdProcess::MgbdProcess(std::vector<uint64_t> gpu_memory, const std::string &policy,
                         bool spread_tasks) {
  char pattern[] = "/tmp/mgb-runtime-test.XXXXXX";
  if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;
  socket_ = dir_ + "/mgbd.sock";
  std::string config = dir_ + "/gpus.json";
  {
    std::ofstream out(config);
    out << "{\"gpus\": [";
    for (size_t i = 0; i < gpu_memory.size(); ++i) {
      out << (i ? ", " : "") << "{\"name\": \"g" << i << "\", \"memory_bytes\": " << gpu_memory[i]
          << ", \"sms\": 132, \"pci_bus_id\": \"" << i << "\"}";  // the fake's bus ids
    }
    out << "]}\n";
  }
  pid_ = fork();
  if (pid_ == 0) {
    execl(MGB_TEST_MGBD_PATH, "mgbd", "--socket", socket_.c_str(), "--gpus", config.c_str(),
          "--policy", policy.c_str(), "--context-reserve", "0",
          spread_tasks ? "--spread-tasks" : static_cast<char *>(nullptr),
          static_cast<char *>(nullptr));
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (Client::StatusAt(socket_, std::chrono::milliseconds(200)).ok()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("mgbd did not come up on " + socket_);
}

MgbdProcess::~MgbdProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

v1::StatusReply MgbdProcess::Status() const {
  for (const ManagedRuntime *m : runtimes_) {
    if (m->runtime != nullptr) m->runtime->FlushReleases();
  }
  auto status = Client::StatusAt(socket_);
  if (!status.ok()) throw std::runtime_error(status.status().ToString());
  return *status;
}

runtime::SessionConfig TestConfig(const std::string &socket, runtime::FailurePolicy policy) {
  runtime::SessionConfig config;
  config.socket_path = socket;
  config.policy = policy;
  config.connect_timeout = std::chrono::milliseconds(1000);
  config.program = "runtime-test";
  config.task_slack_bytes = 0;  // the tests' byte arithmetic is exact; the slack's own test sets it
  config.span_margin_granules = 0;  // likewise; the margins' own test sets them
  return config;
}

ManagedRuntime::ManagedRuntime(const MgbdProcess &mgbd, int devices)
    : ManagedRuntime(mgbd, devices, TestConfig(mgbd.socket())) {}

ManagedRuntime::ManagedRuntime(const MgbdProcess &mgbd_process, int devices,
                               runtime::SessionConfig config)
    : fake(devices),
      runtime(std::make_unique<runtime::Runtime>(fake, std::move(config))),
      server(&mgbd_process) {
  server->runtimes_.push_back(this);
}

ManagedRuntime::~ManagedRuntime() { std::erase(server->runtimes_, this); }

}  // namespace mgb::test

// The process-wide runtime of the C API uses this fake in test programs.
namespace mgb::runtime {
CudaApi &DefaultCudaApi() {
  static test::FakeCudaApi *fake = new test::FakeCudaApi(2);
  return *fake;
}
}  // namespace mgb::runtime
