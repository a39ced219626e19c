#include "status_table.h"

#include <chrono>
#include <cstdio>
#include <string>

#include "inert_text.h"
#include "mgb/core/byte_size.h"

namespace mgb::cli {
namespace {

// A column's text made inert, cut to width with "~" marking the cut (a path keeps its end: the
// file name).
std::string Clip(const std::string &raw, size_t width) {
  if (raw.empty()) return "-";
  const std::string text = InertText(raw);
  if (text.size() <= width) return text;
  return "~" + text.substr(text.size() - (width - 1));
}

// "850 ms", "12.3 s", "4 min 05 s", "2 h 07 min".
std::string FormatAge(int64_t ms) {
  char text[32];
  if (ms < 0) ms = 0;
  if (ms < 1000) {
    std::snprintf(text, sizeof text, "%lld ms", static_cast<long long>(ms));
  } else if (ms < 60'000) {
    std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ms) / 1000);
  } else if (ms < 3'600'000) {
    std::snprintf(text, sizeof text, "%lld min %02lld s", static_cast<long long>(ms / 60'000),
                  static_cast<long long>(ms / 1000 % 60));
  } else {
    std::snprintf(text, sizeof text, "%lld h %02lld min", static_cast<long long>(ms / 3'600'000),
                  static_cast<long long>(ms / 60'000 % 60));
  }
  return text;
}

// The JOB column's text: the Slurm job's id, "-" for none; empty when no task has one.
std::string JobColumn(bool shown, uint64_t job) {
  if (!shown) return "";
  char text[32];
  std::snprintf(text, sizeof text, " %-10s", job == 0 ? "-" : std::to_string(job).c_str());
  return text;
}

}  // namespace

void PrintTable(const v1::StatusReply &s) {
  std::printf("mgbd %s, policy %s, %u sessions, %d running, %d waiting, %llu decisions\n\n",
              s.mgbd_version().empty() ? "?" : s.mgbd_version().c_str(), s.policy().c_str(),
              s.sessions(), s.tasks_size(), s.waiting_size(),
              static_cast<unsigned long long>(s.decisions()));
  std::printf("%-3s %-24s %12s %12s %12s %12s %15s %5s %8s\n", "GPU", "NAME", "TOTAL", "RESERVED",
              "USED", "AVAILABLE", "WARPS", "TASKS", "SESSIONS");
  for (const v1::GpuStatus &g : s.gpus()) {
    const std::string warps =
        std::to_string(g.warps_in_use()) + "/" + std::to_string(g.warp_capacity());
    std::printf("%-3u %-24s %12s %12s %12s %12s %15s %5u %8u\n", g.index(),
                InertText(g.name()).c_str(), core::FormatBytes(g.memory_total_bytes()).c_str(),
                core::FormatBytes(g.memory_reserved_bytes()).c_str(),
                core::FormatBytes(g.memory_used_bytes()).c_str(),
                core::FormatBytes(g.memory_available_bytes()).c_str(), warps.c_str(), g.tasks(),
                g.sessions());
  }
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  // mgbd --slurm: a JOB column (Slurm job ids) after USER, and each job's grant.
  bool jobs = s.jobs_size() > 0;
  for (const v1::TaskStatus &t : s.tasks()) jobs = jobs || t.job_id() != 0;
  for (const v1::TaskStatus &t : s.waiting()) jobs = jobs || t.job_id() != 0;
  const std::string job_header = jobs ? " JOB       " : "";
  if (s.tasks_size() > 0) {
    std::printf("\nrunning:\n%-8s %-3s %-8s %-10s%s %-20s %-20s %12s %12s %12s %7s %9s\n", "TASK",
                "GPU", "PID", "USER", job_header.c_str(), "PROGRAM", "LABEL", "RESERVED",
                "ALLOCATED", "PEAK", "WARPS", "AGE");
    for (const v1::TaskStatus &t : s.tasks()) {
      std::printf("%-8llu %-3u %-8lld %-10s%s %-20s %-20s %12s %12s %12s %7llu %9s\n",
                  static_cast<unsigned long long>(t.task_id()), t.gpu_index(),
                  static_cast<long long>(t.pid()), Clip(t.user(), 10).c_str(),
                  JobColumn(jobs, t.job_id()).c_str(), Clip(t.program(), 20).c_str(),
                  Clip(t.label(), 20).c_str(), core::FormatBytes(t.memory_bytes()).c_str(),
                  t.allocated_bytes() > 0 ? core::FormatBytes(t.allocated_bytes()).c_str() : "-",
                  t.peak_bytes() > 0 ? core::FormatBytes(t.peak_bytes()).c_str() : "-",
                  static_cast<unsigned long long>(t.warps()),
                  FormatAge(now_ms - t.since_unix_ms()).c_str());
    }
  }
  // What `mgb run` tasks learn their peak as (the program, not its exact command line).
  bool profiled = false;
  for (const v1::TaskStatus &t : s.tasks()) profiled = profiled || !t.profile_key().empty();
  if (profiled) {
    std::printf("\nlearned as (mgb run):\n%-8s %-10s %s\n", "TASK", "RESERVED", "PROGRAM");
    for (const v1::TaskStatus &t : s.tasks()) {
      if (t.profile_key().empty()) continue;
      std::printf("%-8llu %-10s %s\n", static_cast<unsigned long long>(t.task_id()),
                  t.provisional() ? "guessed" : "learned", InertText(t.profile_key()).c_str());
    }
  }
  if (s.tasks_not_listed() > 0) {
    std::printf("... and %u more running tasks (mgbd lists %d)\n", s.tasks_not_listed(),
                s.tasks_size());
  }
  if (s.waiting_size() > 0) {
    std::printf("\nwaiting (oldest first):\n%-8s %-8s %-10s%s %-20s %-20s %12s %9s\n", "TASK",
                "PID", "USER", job_header.c_str(), "PROGRAM", "LABEL", "NEEDS", "WAITING");
    for (const v1::TaskStatus &t : s.waiting()) {
      std::printf("%-8llu %-8lld %-10s%s %-20s %-20s %12s %9s\n",
                  static_cast<unsigned long long>(t.task_id()), static_cast<long long>(t.pid()),
                  Clip(t.user(), 10).c_str(), JobColumn(jobs, t.job_id()).c_str(),
                  Clip(t.program(), 20).c_str(), Clip(t.label(), 20).c_str(),
                  core::FormatBytes(t.memory_bytes()).c_str(),
                  FormatAge(now_ms - t.since_unix_ms()).c_str());
    }
  }
  if (s.waiting_not_listed() > 0) {
    std::printf("... and %u more waiting tasks (mgbd lists %d)\n", s.waiting_not_listed(),
                s.waiting_size());
  }
  if (s.jobs_size() > 0) {
    std::printf("\nSlurm jobs:\n%-10s %12s %12s\n", "JOB", "GRANT", "HELD");
    for (const v1::JobStatus &j : s.jobs()) {
      std::printf("%-10llu %12s %12s\n", static_cast<unsigned long long>(j.job_id()),
                  core::FormatBytes(j.grant_bytes()).c_str(),
                  core::FormatBytes(j.held_bytes()).c_str());
    }
  }
}

}  // namespace mgb::cli
