// `mgb top` in a real terminal: tmux runs it in a detached session; the test reads the screen and
// presses q.
#include <unistd.h>

#include <catch2/catch.hpp>

#include "mgb/client.h"
#include "test_support.h"

namespace mgb::test {

TEST_CASE("mgb top redraws the status table in a terminal and quits on q", "[cli]") {
  auto found = RunProcess({"/bin/sh", "-c", "command -v tmux"});
  if (found.exit_code != 0) {
    WARN("tmux is not installed: mgb top's terminal test did not run");
    return;
  }
  const std::string tmux = found.out.substr(0, found.out.find('\n'));
  auto mgbd = StartDaemon(1, 16 * kGiB);
  auto client = Client::Connect(mgbd->socket, getpid(), "top-test");
  REQUIRE(client.ok());
  LaunchShape shape;
  shape.grid.x = 2;
  shape.block.x = 32;
  REQUIRE((*client)->TaskBegin(3 * kGiB, shape, "shown-in-top").ok());
  const std::string session = "mgb-top-test-" + std::to_string(getpid());
  const std::string command = std::string(MGB_CLI) + " top --interval 0.2 --socket " + mgbd->socket;
  REQUIRE(RunProcess({tmux, "-L", session, "new-session", "-d", "-s", session, "-x", "200", "-y",
                      "50", command})
              .exit_code == 0);
  std::string screen;
  WaitFor(
      [&] {
        screen = RunProcess({tmux, "-L", session, "capture-pane", "-p", "-t", session}).out;
        return screen.find("shown-in-top") != std::string::npos;
      },
      std::chrono::seconds(5));
  CHECK_THAT(screen, Catch::Contains("mgb top") && Catch::Contains("shown-in-top") &&
                         Catch::Contains("3.00 GiB") && Catch::Contains("running:"));
  // Redrawn: the screen holds one table, not a scroll of them.
  CHECK(screen.find("mgb top") == screen.rfind("mgb top"));
  RunProcess({tmux, "-L", session, "send-keys", "-t", session, "q"});
  const auto waited = WaitFor(
      [&] {
        return RunProcess({tmux, "-L", session, "has-session", "-t", session}).exit_code != 0;
      },
      std::chrono::seconds(5));
  CHECK(waited < std::chrono::seconds(5));
  RunProcess({tmux, "-L", session, "kill-server"});
}

}  // namespace mgb::test
