#include "report.h"

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "mgb/core/byte_size.h"

namespace mgb::batch {

Summary Summarize(const BatchResult &result) {
  Summary s;
  s.jobs = static_cast<int>(result.records.size());
  s.makespan_s = result.makespan_s;
  int finished = 0, started = 0;
  double turnaround = 0, wait = 0;
  for (const JobRecord &r : result.records) {
    if (r.started_s < 0) {
      ++s.not_run;
      continue;
    }
    ++started;
    wait += r.started_s - r.queued_s;
    if (!r.Finished()) continue;
    ++finished;
    turnaround += r.ended_s - r.queued_s;
    s.succeeded += !r.crashed;
    s.crashed += r.crashed;
    s.oom += r.oom;
    s.check_failed += r.result == "FAIL";
  }
  if (finished) s.mean_turnaround_s = turnaround / finished;
  if (started) s.mean_wait_s = wait / started;
  if (s.jobs) s.crash_percent = 100.0 * s.crashed / s.jobs;
  if (s.makespan_s > 0) s.throughput_jobs_per_hour = s.succeeded * 3600.0 / s.makespan_s;
  return s;
}

std::string BatchResultToJson(const BatchResult &result, const RunInfo &info,
                              const std::vector<GpuSample> &gpu_samples) {
  using nlohmann::json;
  Summary s = Summarize(result);
  json jobs = json::array();
  for (const JobRecord &r : result.records) {
    json kernels = json::array();
    for (const KernelTime &k : r.kernels)
      kernels.push_back({{"name", k.name}, {"ms", k.ms}, {"launches", k.launches}});
    json j = {{"name", r.job.name},
              {"argv", r.job.argv},
              {"workload", r.job.workload},
              {"gb", r.job.gb},
              {"memory_bytes", r.job.memory_bytes},
              {"queued_s", r.queued_s},
              {"started_s", r.started_s},
              {"ended_s", r.ended_s},
              {"run_s", r.Finished() ? r.ended_s - r.started_s : 0.0},
              {"turnaround_s", r.Finished() ? r.ended_s - r.queued_s : 0.0},
              {"exit_code", r.exit_code},
              {"signal", r.signal},
              {"crashed", r.crashed},
              {"oom", r.oom},
              {"result", r.result},
              {"kernel_ms", r.KernelMs()},
              {"kernels", kernels},
              {"stdout", r.stdout_path},
              {"stderr", r.stderr_path}};
    if (r.Finished()) j["host_peak_bytes"] = r.host_peak_bytes;
    if (r.host_wait_s > 0) j["host_wait_s"] = r.host_wait_s;
    if (r.job.host_memory_bytes > 0) j["host_memory_bytes"] = r.job.host_memory_bytes;
    if (r.waits_reported) j["mgb_wait_ms"] = {{"begin", r.wait_begin_ms}, {"grow", r.wait_grow_ms}};
    if (r.memory_sampled) {
      json memory = json::array();
      for (const MemorySample &m : r.memory_samples)
        memory.push_back(json::array({m.t_s, m.bytes}));
      j["memory_samples"] = std::move(memory);
      j["peak_memory_bytes"] = r.PeakMemoryBytes();
    }
    jobs.push_back(j);
  }
  json samples = json::array();
  for (const GpuSample &g : gpu_samples) {
    json gpus = json::array();
    for (const GpuReading &r : g.gpus)
      gpus.push_back({{"util", r.util_percent},
                      {"mem_util", r.mem_util_percent},
                      {"mem_used", r.mem_used_bytes},
                      {"mem_total", r.mem_total_bytes}});
    samples.push_back({{"t_s", g.t_s}, {"gpus", gpus}});
  }
  json doc = {{"label", info.label},
              {"jobs_file", info.jobs_file},
              {"socket", info.socket},
              {"workers", info.workers},
              {"order", info.order},
              {"interrupted", result.interrupted},
              {"summary",
               {{"jobs", s.jobs},
                {"succeeded", s.succeeded},
                {"crashed", s.crashed},
                {"oom", s.oom},
                {"not_run", s.not_run},
                {"check_failed", s.check_failed},
                {"crash_percent", s.crash_percent},
                {"makespan_s", s.makespan_s},
                {"throughput_jobs_per_hour", s.throughput_jobs_per_hour},
                {"mean_turnaround_s", s.mean_turnaround_s},
                {"mean_wait_s", s.mean_wait_s}}},
              {"jobs", jobs},
              {"gpu_samples", samples}};
  if (!info.gpu_note.empty()) doc["gpu_note"] = info.gpu_note;
  doc["host_gate"] =
      info.host_reserve_bytes < 0 ? json("off") : json{{"reserve_bytes", info.host_reserve_bytes}};
  if (!info.per_process_memory.empty()) doc["per_process_memory"] = info.per_process_memory;
  if (!info.worker_changes.empty()) {
    json changes = json::array();
    for (const auto &[t_s, count] : info.worker_changes) changes.push_back({t_s, count});
    doc["workers_auto"] = changes;
  }
  return doc.dump(2) + "\n";
}

void PrintSummaryTable(std::ostream &out, const BatchResult &result, const RunInfo &info) {
  char line[256];
  out << "job                              start      end      run  exit  oom  result  kernel_ms\n";
  for (const JobRecord &r : result.records) {
    std::string exit = r.started_s < 0 ? "-"
                       : r.signal      ? "sig" + std::to_string(r.signal)
                                       : std::to_string(r.exit_code);
    std::snprintf(line, sizeof(line), "%-30.30s %7.1f %8.1f %8.1f %5s %4s %7s %10.1f\n",
                  r.job.name.c_str(), r.started_s, r.ended_s,
                  r.Finished() ? r.ended_s - r.started_s : 0.0, exit.c_str(), r.oom ? "yes" : "-",
                  r.result.empty() ? "-" : r.result.c_str(), r.KernelMs());
    out << line;
  }
  Summary s = Summarize(result);
  std::snprintf(line, sizeof(line),
                "summary %s: workers=%d jobs=%d makespan=%.1fs throughput=%.1f jobs/h "
                "mean_turnaround=%.1fs mean_wait=%.1fs crashed=%d (%.1f%%) oom=%d not_run=%d%s\n",
                info.label.empty() ? "-" : info.label.c_str(), info.workers, s.jobs, s.makespan_s,
                s.throughput_jobs_per_hour, s.mean_turnaround_s, s.mean_wait_s, s.crashed,
                s.crash_percent, s.oom, s.not_run, result.interrupted ? " INTERRUPTED" : "");
  out << line;
  size_t held = 0;
  double held_s = 0;
  uint64_t largest = 0;
  for (const JobRecord &r : result.records) {
    held += r.host_wait_s > 0;
    held_s += r.host_wait_s;
    largest = std::max(largest, r.host_peak_bytes);
  }
  const std::string gate =
      info.host_reserve_bytes < 0
          ? "gate off"
          : "gate reserve " + core::FormatBytes(static_cast<uint64_t>(info.host_reserve_bytes));
  std::snprintf(line, sizeof(line),
                "host memory: %s, %zu job(s) held %.1f s in all, largest job peak %s\n",
                gate.c_str(), held, held_s, core::FormatBytes(largest).c_str());
  out << line;
}

}  // namespace mgb::batch
