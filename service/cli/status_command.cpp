// mgb status [--json] [--socket PATH]: what mgbd holds, per GPU, and its queue.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "byte_size.h"
#include "commands.h"
#include "flags.h"
#include "mgb.pb.h"
#include "mgb/client.h"

namespace mgb::cli {
namespace {

nlohmann::json TaskJson(const v1::TaskStatus &t) {
  return {{"task_id", t.task_id()},         {"session", t.session_id()},
          {"pid", t.pid()},                 {"program", t.program()},
          {"label", t.label()},             {"memory_bytes", t.memory_bytes()},
          {"warps", t.warps()},             {"gpu_index", t.gpu_index()},
          {"since_unix_ms", t.since_unix_ms()}};
}

void PrintJson(const v1::StatusReply &s) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const v1::GpuStatus &g : s.gpus()) {
    gpus.push_back({{"index", g.index()},
                    {"name", g.name()},
                    {"uuid", g.uuid()},
                    {"memory_total", g.memory_total()},
                    {"memory_reserved", g.memory_reserved()},
                    {"memory_used", g.memory_used()},
                    {"memory_available", g.memory_available()},
                    {"warps_in_use", g.warps_in_use()},
                    {"warp_capacity", g.warp_capacity()},
                    {"tasks", g.tasks()},
                    {"sessions", g.sessions()},
                    {"sms", g.sms()}});
  }
  nlohmann::json running = nlohmann::json::array(), waiting = nlohmann::json::array();
  for (const v1::TaskStatus &t : s.tasks()) running.push_back(TaskJson(t));
  for (const v1::TaskStatus &t : s.waiting()) waiting.push_back(TaskJson(t));
  nlohmann::json doc = {{"policy", s.policy()},
                        {"gpus", gpus},
                        {"waiting", s.waiting_size()},
                        {"running", s.tasks_size()},
                        {"sessions", s.sessions()},
                        {"decisions", s.decisions()},
                        {"running_tasks", running},
                        {"waiting_tasks", waiting}};
  std::printf("%s\n", doc.dump(2).c_str());
}

void PrintTable(const v1::StatusReply &s) {
  std::printf("policy %s, %u sessions, %d running, %d waiting, %llu decisions\n\n",
              s.policy().c_str(), s.sessions(), s.tasks_size(), s.waiting_size(),
              static_cast<unsigned long long>(s.decisions()));
  std::printf("%-3s %-24s %12s %12s %12s %12s %15s %5s %8s\n", "GPU", "NAME", "TOTAL",
              "RESERVED", "USED", "AVAILABLE", "WARPS", "TASKS", "SESSIONS");
  for (const v1::GpuStatus &g : s.gpus()) {
    const std::string warps = std::to_string(g.warps_in_use()) + "/" + std::to_string(g.warp_capacity());
    std::printf("%-3u %-24s %12s %12s %12s %12s %15s %5u %8u\n", g.index(), g.name().c_str(),
                FormatBytes(g.memory_total()).c_str(), FormatBytes(g.memory_reserved()).c_str(),
                FormatBytes(g.memory_used()).c_str(), FormatBytes(g.memory_available()).c_str(),
                warps.c_str(), g.tasks(), g.sessions());
  }
  if (s.waiting_size() > 0) {
    std::printf("\nwaiting (oldest first):\n");
    for (const v1::TaskStatus &t : s.waiting()) {
      std::printf("  task %llu pid %lld %s %s needs %s\n",
                  static_cast<unsigned long long>(t.task_id()), static_cast<long long>(t.pid()),
                  t.program().c_str(), t.label().c_str(), FormatBytes(t.memory_bytes()).c_str());
    }
  }
}

}  // namespace

int RunStatusCommand(int argc, char **argv) {
  bool json = false;
  std::string socket = SocketFromEnvironment();
  FlagParser flags(argv[0], "mgb status [--json] [--socket PATH]\n\n"
                            "Shows each GPU's memory (total, reserved, used, available), warps in use,\n"
                            "tasks and sessions, and the tasks waiting for a GPU.");
  flags.Bool("json", &json, "print JSON (byte and count fields are integers)");
  flags.String("socket", &socket, "mgbd's socket (default: $MGB_SOCKET or /tmp/mgbd.sock)");
  if (std::optional<int> exit_code = flags.Parse(argc, argv, nullptr)) return *exit_code;
  absl::StatusOr<v1::StatusReply> status = Client::StatusAt(socket);
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[0], std::string(status.status().message()).c_str());
    return 1;
  }
  if (json) {
    PrintJson(*status);
  } else {
    PrintTable(*status);
  }
  return 0;
}

}  // namespace mgb::cli
