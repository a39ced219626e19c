// The one NVML loader (service/nvml) against the fake libnvidia-ml of fake_nvml.cpp, loaded
// through MGB_NVML_LIBRARY: inventory, memory, utilisation, per-process memory (_v3 and _v2).
#include <catch2/catch.hpp>

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "nvml.h"
#include "nvml_library.h"

using mgb::nvml::Library;

namespace {

// Sets an environment variable for one test, restoring "unset" afterwards.
struct ScopedEnv {
  std::string name;
  ScopedEnv(const std::string &n, const std::string &value) : name(n) {
    setenv(n.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

std::string ScriptPath() { return "/tmp/mgb-fake-nvml-" + std::to_string(getpid()) + ".procs"; }

// Children that only wait to be killed: live pids for the fake's process list.
struct Sleepers {
  std::vector<pid_t> pids;
  explicit Sleepers(int n) {
    for (int i = 0; i < n; ++i) {
      pid_t pid = fork();
      if (pid == 0) {
        pause();
        _exit(0);
      }
      pids.push_back(pid);
    }
  }
  ~Sleepers() {
    for (pid_t pid : pids) kill(pid, SIGKILL);
    for (pid_t pid : pids) waitpid(pid, nullptr, 0);
  }
};

}  // namespace

TEST_CASE("the NVML path is libnvidia-ml.so.1 unless MGB_NVML_LIBRARY says otherwise", "[nvml]") {
  unsetenv("MGB_NVML_LIBRARY");
  CHECK(Library::Path() == "libnvidia-ml.so.1");
  ScopedEnv env("MGB_NVML_LIBRARY", "/opt/x/libfake.so");
  CHECK(Library::Path() == "/opt/x/libfake.so");
}

TEST_CASE("a missing NVML library is an error naming the file", "[nvml]") {
  ScopedEnv env("MGB_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
  std::string error;
  CHECK(Library::Open(&error) == nullptr);
  CHECK(error.find("/nonexistent/libnvidia-ml.so.1") != std::string::npos);
  auto nvml = mgb::nvml::Nvml::Load();
  REQUIRE_FALSE(nvml.ok());
  CHECK(std::string(nvml.status().message()).find("--gpus FILE") != std::string::npos);
}

TEST_CASE("the fake NVML gives mgbd's inventory and memory", "[nvml]") {
  ScopedEnv lib("MGB_NVML_LIBRARY", MGB_FAKE_NVML);
  ScopedEnv gpus("MGB_FAKE_NVML_GPUS", "3");
  ScopedEnv script("MGB_FAKE_NVML_PROCS", ScriptPath());
  std::ofstream(ScriptPath()) << "1 " << getpid() << " 5000\n";
  auto nvml = mgb::nvml::Nvml::Load();
  REQUIRE(nvml.ok());
  auto inventory = (*nvml)->Inventory();
  REQUIRE(inventory.ok());
  REQUIRE(inventory->size() == 3);
  const mgb::core::GpuSpec &g = (*inventory)[1];
  CHECK(g.has_nvml);
  CHECK(g.name == "Fake H200 1");
  CHECK(g.uuid == "GPU-fake-1");
  CHECK(g.pci_bus_id == "00000000:19:00.0");
  CHECK(g.memory_bytes == (80ULL << 30));
  CHECK(g.sms == 132);  // 16,896 cores / 128 per SM on compute capability 9.0
  CHECK(g.sm.max_warps == 64);
  auto used = (*nvml)->Memory(1);
  REQUIRE(used.ok());
  CHECK(used->used_bytes == 5000);
  CHECK(used->free_bytes == (80ULL << 30) - 5000);
  CHECK((*nvml)->Memory(3).status().code() == absl::StatusCode::kOutOfRange);
  std::remove(ScriptPath().c_str());
}

TEST_CASE("utilisation and per-process memory through the loader", "[nvml]") {
  const bool v2_only = GENERATE(false, true);
  INFO((v2_only ? "fake without _v3" : "fake with _v3"));
  ScopedEnv lib("MGB_NVML_LIBRARY", v2_only ? MGB_FAKE_NVML_V2 : MGB_FAKE_NVML);
  std::string error;
  std::unique_ptr<Library> nvml = Library::Open(&error);
  REQUIRE(nvml != nullptr);
  REQUIRE(nvml->DeviceCount() == 2);
  mgb::nvml::Utilization u;
  REQUIRE(nvml->GetUtilization(1, &u, &error));
  CHECK(u.gpu_percent == 41);
  CHECK(u.memory_percent == 7);

  std::vector<mgb::nvml::ProcessMemory> processes;
  SECTION("no process listing: the error names the call") {
    CHECK_FALSE(nvml->ComputeProcesses(0, &processes, &error));
    CHECK(error.find(v2_only ? "nvmlDeviceGetComputeRunningProcesses_v2"
                             : "nvmlDeviceGetComputeRunningProcesses_v3") != std::string::npos);
    CHECK(error.find("Not Supported") != std::string::npos);
  }
  SECTION("more processes than the first buffer holds, dead ones left out") {
    Sleepers sleepers(20);
    pid_t dead = fork();
    if (dead == 0) _exit(0);
    waitpid(dead, nullptr, 0);
    ScopedEnv script("MGB_FAKE_NVML_PROCS", ScriptPath());
    {
      std::ofstream out(ScriptPath());
      out << "0 " << dead << " 99999\n";
      for (size_t i = 0; i < sleepers.pids.size(); ++i)
        out << "0 " << sleepers.pids[i] << " " << (i + 1) * 100 << "\n";
      out << "1 " << getpid() << " 777\n";
    }
    REQUIRE(nvml->ComputeProcesses(0, &processes, &error));
    CHECK(processes.size() == 20);
    uint64_t total = 0;
    for (const auto &p : processes) total += p.used_bytes;
    CHECK(total == 100 * 20 * 21 / 2);
    REQUIRE(nvml->ComputeProcesses(1, &processes, &error));
    REQUIRE(processes.size() == 1);
    CHECK(processes[0].pid == static_cast<uint32_t>(getpid()));
    CHECK(processes[0].used_bytes == 777);
    std::remove(ScriptPath().c_str());
  }
}
