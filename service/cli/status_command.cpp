// mgb status [--json | --format=table|json|prometheus] [--socket PATH]: what mgbd holds, per GPU
// and per task, and its queue.
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "mgb/core/byte_size.h"
#include "commands.h"
#include "flags.h"
#include "mgb.pb.h"
#include "mgb/client.h"
#include "prometheus_text.h"
#include "status_table.h"

namespace mgb::cli {
namespace {

nlohmann::json TaskJson(const v1::TaskStatus &t) {
  return {{"task_id", t.task_id()},
          {"session", t.session_id()},
          {"pid", t.pid()},
          {"program", t.program()},
          {"label", t.label()},
          {"memory_bytes", t.memory_bytes()},
          {"warps", t.warps()},
          {"gpu_index", t.has_gpu_index() ? nlohmann::json(t.gpu_index()) : nlohmann::json()},
          {"since_unix_ms", t.since_unix_ms()},
          {"allocated_bytes", t.allocated_bytes()},
          {"peak_bytes", t.peak_bytes()},
          {"user", t.user()},
          {"job_id", t.job_id()},
          {"profile_key", t.profile_key()},
          {"provisional", t.provisional()}};
}

void PrintJson(const v1::StatusReply &s) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const v1::GpuStatus &g : s.gpus()) {
    gpus.push_back({{"index", g.index()},
                    {"name", g.name()},
                    {"uuid", g.uuid()},
                    {"memory_total_bytes", g.memory_total_bytes()},
                    {"memory_reserved_bytes", g.memory_reserved_bytes()},
                    {"memory_used_bytes", g.memory_used_bytes()},
                    {"memory_available_bytes", g.memory_available_bytes()},
                    {"warps_in_use", g.warps_in_use()},
                    {"warp_capacity", g.warp_capacity()},
                    {"tasks", g.tasks()},
                    {"sessions", g.sessions()},
                    {"sms", g.sms()}});
  }
  nlohmann::json running = nlohmann::json::array(), waiting = nlohmann::json::array();
  for (const v1::TaskStatus &t : s.tasks()) running.push_back(TaskJson(t));
  for (const v1::TaskStatus &t : s.waiting()) waiting.push_back(TaskJson(t));
  nlohmann::json jobs = nlohmann::json::array();
  for (const v1::JobStatus &j : s.jobs()) {
    jobs.push_back(
        {{"job_id", j.job_id()}, {"grant_bytes", j.grant_bytes()}, {"held_bytes", j.held_bytes()}});
  }
  nlohmann::json doc = {{"mgbd_version", s.mgbd_version()},
                        {"policy", s.policy()},
                        {"jobs", jobs},
                        {"gpus", gpus},
                        // Counts of all tasks; the lists stop at mgbd's limit (2,000 each).
                        {"waiting", s.waiting_size() + s.waiting_not_listed()},
                        {"running", s.tasks_size() + s.tasks_not_listed()},
                        {"sessions", s.sessions()},
                        {"decisions", s.decisions()},
                        {"running_tasks", running},
                        {"waiting_tasks", waiting}};
  std::printf("%s\n", doc.dump(2).c_str());
}

}  // namespace

int RunStatusCommand(int argc, char **argv) {
  bool json = false;
  std::string format = "table";
  std::string socket = SocketFromEnvironment();
  FlagParser flags(
      argv[0],
      "mgb status [--json | --format=table|json|prometheus] [--socket PATH]\n\n"
      "Shows each GPU's memory (total, reserved, used, available), warps in use,\n"
      "tasks and sessions; each running task (GPU, pid, user, program, label, reserved,\n"
      "allocated and peak memory, warps, age); and the tasks waiting for a GPU (what\n"
      "they need, for how long), oldest first. --format=prometheus prints the metrics\n"
      "mgbd --metrics serves, for node_exporter's textfile collector.");
  flags.Bool("json", &json, "print JSON (byte and count fields are integers): --format=json");
  flags.Value("format", "FORMAT", "table (default), json, or prometheus (text exposition format)",
              [&format](const std::string &value) -> std::optional<std::string> {
                if (value != "table" && value != "json" && value != "prometheus") {
                  return "must be table, json or prometheus, not '" + value + "'";
                }
                format = value;
                return std::nullopt;
              });
  flags.String("socket", &socket, "mgbd's socket (default: $MGB_SOCKET or /tmp/mgbd.sock)");
  if (std::optional<int> exit_code = flags.Parse(argc, argv, nullptr)) return *exit_code;
  absl::StatusOr<v1::StatusReply> status = Client::StatusAt(socket);
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", argv[0], std::string(status.status().message()).c_str());
    return 1;
  }
  if (json || format == "json") {
    PrintJson(*status);
  } else if (format == "prometheus") {
    std::fputs(metrics::PrometheusText(*status).c_str(), stdout);
  } else {
    PrintTable(*status);
  }
  return 0;
}

}  // namespace mgb::cli
