// Session handling: mgbd absent (no hang, one clear line, exit or unmanaged), and the C API of
// mgb.h through the process-wide runtime (each test case runs in its own process under CTest).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>

#include "mgb/mgb.h"
#include "runtime_fixture.h"

using namespace mgb::test;
using mgb::runtime::FailurePolicy;

namespace {
struct ChildResult {
  int exit_code;
  std::string stderr_text;
  std::string stdout_text;
};

// Runs the hidden test case `name` of this test program in a fresh process (gRPC does not survive
// fork in a process that already used it), capturing its output and exit code.
ChildResult RunChild(const char *name) {
  int out[2], err[2];
  REQUIRE(pipe(out) == 0);
  REQUIRE(pipe(err) == 0);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    execl("/proc/self/exe", "runtime_test", name, static_cast<char *>(nullptr));
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  auto slurp = [](int fd) {
    std::string text;
    char buffer[512];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<size_t>(n));
    close(fd);
    return text;
  };
  ChildResult result{-1, "", ""};
  result.stdout_text = slurp(out[0]);
  result.stderr_text = slurp(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}
}  // namespace

// The children of the two tests above; hidden ([.]): run only by name.
TEST_CASE("child: unmanaged run", "[.]") {
  FakeCudaApi fake(1);
  mgb::runtime::Runtime rt(fake,
                           TestConfig("/tmp/mgb-no-such-dir/mgbd.sock", FailurePolicy::kUnmanaged));
  void *p = nullptr;
  bool plain = rt.Malloc(&p, 64) == cudaSuccess && !rt.IsStandIn(p);  // a plain cudaMalloc
  bool no_task = rt.TaskBegin(64, {1, 1, 1}, {1, 1, 1}, nullptr, "x") == 0;
  if (plain && no_task) std::printf("ran as plain CUDA\n");
  std::fflush(stdout);
  std::_Exit(plain && no_task ? 0 : 3);
}

TEST_CASE("child: exit run", "[.]") {
  FakeCudaApi fake(1);
  mgb::runtime::Runtime rt(fake, TestConfig("/tmp/mgb-no-such-dir/mgbd.sock"));
  void *p = nullptr;
  rt.Malloc(&p, 64);
  std::printf("should not get here\n");
  std::fflush(stdout);
  std::_Exit(0);
}

TEST_CASE("without mgbd the program runs unmanaged when MGB_UNMANAGED allows it",
          "[runtime][session]") {
  auto start = std::chrono::steady_clock::now();
  ChildResult child = RunChild("child: unmanaged run");
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));  // never hangs
  CHECK(child.exit_code == 0);
  CHECK(child.stdout_text.find("ran as plain CUDA\n") != std::string::npos);
  CHECK(child.stderr_text.find("mgb: cannot reach mgbd at /tmp/mgb-no-such-dir/mgbd.sock") == 0);
  CHECK(child.stderr_text.find("running unmanaged") != std::string::npos);
  CHECK(std::count(child.stderr_text.begin(), child.stderr_text.end(), '\n') == 1);
}

TEST_CASE("without mgbd the program exits by default with one clear line", "[runtime][session]") {
  ChildResult child = RunChild("child: exit run");
  CHECK(child.exit_code == mgb::runtime::kExitUnavailable);
  CHECK(child.stdout_text.find("should not get here") == std::string::npos);
  CHECK(child.stderr_text.find("mgb: cannot reach mgbd") == 0);
  CHECK(child.stderr_text.find("MGB_UNMANAGED=1") != std::string::npos);
}

TEST_CASE("MGB_UNMANAGED and MGB_SOCKET are read from the environment", "[runtime][session]") {
  setenv("MGB_SOCKET", "/tmp/custom.sock", 1);
  setenv("MGB_UNMANAGED", "1", 1);
  auto config = mgb::runtime::SessionConfig::FromEnvironment();
  CHECK(config.socket_path == "/tmp/custom.sock");
  CHECK(config.policy == FailurePolicy::kUnmanaged);
  setenv("MGB_UNMANAGED", "0", 1);
  CHECK(mgb::runtime::SessionConfig::FromEnvironment().policy == FailurePolicy::kExit);
  unsetenv("MGB_UNMANAGED");
  CHECK(mgb::runtime::SessionConfig::FromEnvironment().policy == FailurePolicy::kExit);
}

TEST_CASE("MGB_REPORT_WAITS turns on the wait clock's line at exit; it is off by default",
          "[runtime][session]") {
  unsetenv("MGB_REPORT_WAITS");
  CHECK_FALSE(mgb::runtime::SessionConfig::FromEnvironment().report_waits);
  setenv("MGB_REPORT_WAITS", "1", 1);
  CHECK(mgb::runtime::SessionConfig::FromEnvironment().report_waits);
  setenv("MGB_REPORT_WAITS", "off", 1);
  CHECK_FALSE(mgb::runtime::SessionConfig::FromEnvironment().report_waits);
  setenv("MGB_REPORT_WAITS", "maybe", 1);  // reported, taken as off
  CHECK_FALSE(mgb::runtime::SessionConfig::FromEnvironment().report_waits);
  unsetenv("MGB_REPORT_WAITS");
}

namespace {
// A MiB variable: unset gives the default, 0 and a number are taken, a bad value is ignored.
void CheckMegabytes(const char *name, size_t mgb::runtime::SessionConfig::*field,
                    size_t default_bytes, const char *bad) {
  unsetenv(name);
  CHECK(mgb::runtime::SessionConfig::FromEnvironment().*field == default_bytes);
  setenv(name, "0", 1);
  CHECK(mgb::runtime::SessionConfig::FromEnvironment().*field == 0);
  setenv(name, "1024", 1);  // a bare number is MiB
  CHECK(mgb::runtime::SessionConfig::FromEnvironment().*field == (size_t(1) << 30));
  setenv(name, "512K", 1);  // or a size as on mgb's command lines
  CHECK(mgb::runtime::SessionConfig::FromEnvironment().*field == (size_t(512) << 10));
  setenv(name, bad, 1);  // ignored, with a message
  CHECK(mgb::runtime::SessionConfig::FromEnvironment().*field == default_bytes);
  unsetenv(name);
}
}  // namespace

TEST_CASE("MGB_CAPTURE_LIMIT_MB sets the lazy layer's host capture limit", "[runtime][session]") {
  CheckMegabytes("MGB_CAPTURE_LIMIT_MB", &mgb::runtime::SessionConfig::capture_limit_bytes,
                 size_t(256) << 20, "lots");
}

TEST_CASE("MGB_TASK_SLACK_MB sets the bytes every task reserves for small later buffers",
          "[runtime][session]") {
  CheckMegabytes("MGB_TASK_SLACK_MB", &mgb::runtime::SessionConfig::task_slack_bytes,
                 size_t(2) << 20, "-1");
}

namespace {
void ScaleKernel() {}
}  // namespace

TEST_CASE("the C API and the C++ helpers of mgb.h drive the process-wide runtime",
          "[runtime][capi]") {
  MgbdProcess mgbd({1024 * kMiB});
  setenv("MGB_SOCKET", mgbd.socket().c_str(), 1);
  auto &fake = static_cast<FakeCudaApi &>(mgb::runtime::DefaultCudaApi());
  struct Pair {
    float *in;
    float *out;
  } pair{};
  REQUIRE(mgb_cudaMalloc(&pair.in, 4 * sizeof(float)) == cudaSuccess);  // the template overload
  REQUIRE(mgb_cudaMalloc(&pair.out, 4 * sizeof(float)) == cudaSuccess);
  float host[4] = {1, 2, 3, 4};
  REQUIRE(mgb_cudaMemcpy(pair.in, host, sizeof host, cudaMemcpyHostToDevice) == cudaSuccess);
  fake.RegisterKernel(reinterpret_cast<const void *>(&ScaleKernel), {sizeof(Pair), sizeof(int)},
                      [](FakeLaunch &launch) {
                        Pair p = *static_cast<Pair *>(launch.args[0]);
                        int n = *static_cast<int *>(launch.args[1]);
                        for (int i = 0; i < n; ++i) p.out[i] = 2 * p.in[i];
                      });
  int n = 4;
  // What the rewriter emits for a lazy launch: mgb_prepare(...); kernel<<<>>>(mgb_arg(...)...).
  REQUIRE(mgb_prepare(mgb_dim(dim3(1)), mgb_dim(dim3(4)),
                      reinterpret_cast<const void *>(&ScaleKernel), "capi.cu:7", pair,
                      n) == cudaSuccess);
  Pair real = mgb_arg(pair);
  int real_n = mgb_arg(n);
  void *args[] = {&real, &real_n};
  REQUIRE(fake.LaunchKernel(reinterpret_cast<const void *>(&ScaleKernel), dim3(1), dim3(4), args, 0,
                            nullptr) == cudaSuccess);
  float result[4];
  REQUIRE(mgb_cudaMemcpy(result, pair.out, sizeof result, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(result[3] == 8.0f);
  CHECK(mgbd.Status().tasks_size() == 1);
  mgb_cudaFree(pair.in);
  mgb_cudaFree(pair.out);
  mgb::runtime::Runtime::Global().FlushReleases();  // the task's end is sent, not waited for
  CHECK(mgbd.Status().tasks_size() == 0);
}
