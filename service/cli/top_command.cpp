// mgb top [--interval SECONDS] [--iterations N] [--socket PATH]: `mgb status`'s table, redrawn in
// place until q or Ctrl-C (or N redraws). A lost mgbd is shown on the screen, not fatal: it may be
// restarting.
#include <poll.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

#include "commands.h"
#include "flags.h"
#include "mgb/client.h"
#include "status_table.h"

namespace mgb::cli {
namespace {

volatile sig_atomic_t g_stop = 0;  // Ctrl-C or SIGTERM: leave the loop, restore the terminal
void OnStop(int) { g_stop = 1; }

// Keys without Enter while top runs (a terminal only); restored at exit.
class RawKeys {
 public:
  RawKeys() {
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~RawKeys() {
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  RawKeys(const RawKeys &) = delete;
  RawKeys &operator=(const RawKeys &) = delete;

  // Waits up to `ms` for a key; true when it was q (or stdin ended).
  bool QuitWithin(int ms) const {
    pollfd in = {STDIN_FILENO, POLLIN, 0};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (g_stop) return true;
      if (left <= 0) return false;
      if (poll(&in, active_ ? 1 : 0, static_cast<int>(left)) <= 0) continue;  // or a signal
      char key = 0;
      const ssize_t got = read(STDIN_FILENO, &key, 1);
      if (got <= 0 || key == 'q' || key == 'Q') return true;
    }
  }

 private:
  termios saved_{};
  bool active_ = false;
};

}  // namespace

int RunTopCommand(int argc, char **argv) {
  std::string socket = SocketFromEnvironment();
  double interval = 1;
  int64_t iterations = 0;
  FlagParser flags(argv[0],
                   "mgb top [--interval SECONDS] [--iterations N] [--socket PATH]\n\n"
                   "Shows `mgb status` live: every GPU, running task and waiting task, redrawn\n"
                   "every interval until q or Ctrl-C.");
  flags.Value("interval", "SECONDS", "time between redraws (default 1; at least 0.1)",
              [&](const std::string &value) -> std::optional<std::string> {
                char *end = nullptr;
                interval = std::strtod(value.c_str(), &end);
                if (value.empty() || *end != '\0' || !(interval >= 0.1) || interval > 3600) {
                  return "must be a number of seconds in 0.1..3600, not '" + value + "'";
                }
                return std::nullopt;
              });
  flags.Int("iterations", &iterations, "stop after N redraws (default 0: until q or Ctrl-C)");
  flags.String("socket", &socket,
               "mgbd's socket (default: $MGB_SOCKET, /run/mgbd/mgbd.sock or /tmp/mgbd.sock)");
  if (std::optional<int> exit_code = flags.Parse(argc, argv, nullptr)) return *exit_code;
  if (iterations < 0) return flags.Fail("--iterations must be >= 0");
  struct sigaction stop = {};
  stop.sa_handler = OnStop;  // no SA_RESTART: the wait returns at once
  sigaction(SIGINT, &stop, nullptr);
  sigaction(SIGTERM, &stop, nullptr);
  const RawKeys keys;
  for (int64_t drawn = 0; iterations == 0 || drawn < iterations; ++drawn) {
    absl::StatusOr<v1::StatusReply> status =
        Client::StatusAt(socket, std::chrono::milliseconds(1000));
    const std::time_t now = std::time(nullptr);
    char clock[16];
    std::strftime(clock, sizeof(clock), "%H:%M:%S", std::localtime(&now));
    std::printf("\033[H\033[2Jmgb top  %s  %s  (q quits)\n\n", socket.c_str(), clock);
    if (status.ok()) {
      PrintTable(*status);
    } else {
      std::printf("mgbd does not answer: %s\n", std::string(status.status().message()).c_str());
    }
    std::fflush(stdout);
    if (iterations != 0 && drawn + 1 == iterations) break;
    if (keys.QuitWithin(static_cast<int>(interval * 1000))) break;
  }
  return 0;
}

}  // namespace mgb::cli
