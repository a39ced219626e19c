// mgb watch [--count N] [--socket PATH]: mgbd's scheduling events as they happen, one per line.
#include <cstdio>
#include <string>

#include "mgb/core/byte_size.h"
#include "commands.h"
#include "event_names.h"
#include "flags.h"
#include "mgb.pb.h"
#include "mgb/client.h"

namespace mgb::cli {

int RunWatchCommand(int argc, char **argv) {
  std::string socket = SocketFromEnvironment();
  int64_t count = 0;
  FlagParser flags(argv[0],
                   "mgb watch [--count N] [--socket PATH]\n\n"
                   "Prints mgbd's scheduling events (sessions, tasks queued, placed, grown,\n"
                   "ended, cancelled) as they happen, one line each.");
  flags.Int("count", &count, "stop after N events (default: run until interrupted)");
  flags.String("socket", &socket, "mgbd's socket (default: $MGB_SOCKET or /tmp/mgbd.sock)");
  if (std::optional<int> exit_code = flags.Parse(argc, argv, nullptr)) return *exit_code;
  if (count < 0) return flags.Fail("--count must be >= 0");
  int64_t seen = 0;
  absl::Status status = Client::WatchAt(socket, [&](const v1::Event &e) {
    const std::string kind = EventKindName(e.kind());
    std::string extra;
    if (e.grow_bytes() > 0) extra += " grow " + core::FormatBytes(e.grow_bytes());
    if (!e.cancel_reason().empty()) extra += " reason " + e.cancel_reason();
    // "gpu -1" for none, as mgbd's --verbose log writes it: the lines stay as they were.
    const long long gpu = e.has_gpu_index() ? static_cast<long long>(e.gpu_index()) : -1;
    std::printf("%lld %-15s%s session %s pid %lld task %llu gpu %lld memory %s warps %llu%s\n",
                static_cast<long long>(e.unix_ms()), kind.c_str(), e.grow() ? " (grow)" : "",
                e.session_id().c_str(), static_cast<long long>(e.pid()),
                static_cast<unsigned long long>(e.task_id()), gpu,
                core::FormatBytes(e.memory_bytes()).c_str(),
                static_cast<unsigned long long>(e.warps()), extra.c_str());
    std::fflush(stdout);
    return count == 0 || ++seen < count;
  });
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[0], std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}

}  // namespace mgb::cli
