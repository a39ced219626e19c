#include "prometheus_text.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace mgb::metrics {
namespace {

// Label values escaped as the format asks: backslash, double quote, newline.
std::string Escape(const std::string &value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string Number(double value) {
  if (std::isinf(value)) return "+Inf";
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

class Writer {
 public:
  // Starts a metric family: its HELP and TYPE lines.
  void Family(const std::string &name, const std::string &type, const std::string &help) {
    out_ << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  }
  void Sample(const std::string &name, const std::string &labels, double value) {
    out_ << name;
    if (!labels.empty()) out_ << '{' << labels << '}';
    out_ << ' ' << Number(value) << '\n';
  }
  std::string Text() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

std::string GpuLabels(const v1::GpuStatus &g) {
  return "gpu=\"" + std::to_string(g.index()) + "\",name=\"" + Escape(g.name()) + "\",uuid=\"" +
         Escape(g.uuid()) + "\"";
}

}  // namespace

std::string PrometheusText(const v1::StatusReply &status) {
  Writer w;
  // Per GPU: what it has, what mgbd granted, what programs said they allocated.
  std::map<uint32_t, double> allocated;
  for (const v1::TaskStatus &t : status.tasks()) {
    if (t.has_gpu_index()) allocated[t.gpu_index()] += static_cast<double>(t.allocated_bytes());
  }
  struct GpuGauge {
    const char *name, *help;
    double (*value)(const v1::GpuStatus &);
  };
  const GpuGauge gauges[] = {
      {"mgb_gpu_memory_total_bytes", "Device memory of the GPU.",
       [](const v1::GpuStatus &g) { return static_cast<double>(g.memory_total_bytes()); }},
      {"mgb_gpu_memory_reserved_bytes", "Memory granted to tasks plus context reserves.",
       [](const v1::GpuStatus &g) { return static_cast<double>(g.memory_reserved_bytes()); }},
      {"mgb_gpu_memory_used_bytes", "NVML's used memory (config GPUs: the reserved bytes).",
       [](const v1::GpuStatus &g) { return static_cast<double>(g.memory_used_bytes()); }},
      {"mgb_gpu_memory_available_bytes", "What a new task could be granted now.",
       [](const v1::GpuStatus &g) { return static_cast<double>(g.memory_available_bytes()); }},
      {"mgb_gpu_warps_in_use", "Warps mgbd counts for the GPU's running tasks.",
       [](const v1::GpuStatus &g) { return static_cast<double>(g.warps_in_use()); }},
      {"mgb_gpu_warp_capacity", "SMs times the most warps an SM holds.",
       [](const v1::GpuStatus &g) { return static_cast<double>(g.warp_capacity()); }},
      {"mgb_gpu_tasks", "Tasks running on the GPU.",
       [](const v1::GpuStatus &g) { return static_cast<double>(g.tasks()); }},
      {"mgb_gpu_sessions", "Processes holding a context on the GPU.",
       [](const v1::GpuStatus &g) { return static_cast<double>(g.sessions()); }},
  };
  for (const GpuGauge &gauge : gauges) {
    w.Family(gauge.name, "gauge", gauge.help);
    for (const v1::GpuStatus &g : status.gpus()) w.Sample(gauge.name, GpuLabels(g), gauge.value(g));
  }
  w.Family("mgb_gpu_memory_allocated_bytes", "gauge",
           "Memory the GPU's tasks said they allocated (libmgb, the guard, NVML readings).");
  for (const v1::GpuStatus &g : status.gpus()) {
    w.Sample("mgb_gpu_memory_allocated_bytes", GpuLabels(g), allocated[g.index()]);
  }
  w.Family("mgb_tasks_running", "gauge", "Tasks placed and not yet ended.");
  w.Sample("mgb_tasks_running", "", status.tasks_size());
  w.Family("mgb_tasks_waiting", "gauge", "Tasks in mgbd's queue.");
  w.Sample("mgb_tasks_waiting", "", status.waiting_size());
  w.Family("mgb_sessions", "gauge", "Open sessions (client processes).");
  w.Sample("mgb_sessions", "", status.sessions());

  const v1::SchedulerCounters &c = status.counters();
  w.Family("mgb_decisions_total", "counter", "Placements made since mgbd started.");
  w.Sample("mgb_decisions_total", "", static_cast<double>(status.decisions()));
  w.Family("mgb_tasks_queued_total", "counter", "TaskBegins that had to wait.");
  w.Sample("mgb_tasks_queued_total", "", static_cast<double>(c.tasks_queued()));
  w.Family("mgb_grows_total", "counter", "Reservations grown.");
  w.Sample("mgb_grows_total", "", static_cast<double>(c.grows()));
  w.Family("mgb_grows_queued_total", "counter", "Grows that had to wait.");
  w.Sample("mgb_grows_queued_total", "", static_cast<double>(c.grows_queued()));
  w.Family("mgb_cancellations_total", "counter",
           "Tasks and grows that gave up waiting or were refused, by reason.");
  for (const v1::CancelCount &cancel : c.cancellations()) {
    w.Sample("mgb_cancellations_total",
             "reason=\"" + Escape(cancel.reason()) + "\",request=\"" +
                 (cancel.grow() ? "grow" : "task") + "\"",
             static_cast<double>(cancel.count()));
  }
  w.Family("mgb_task_wait_seconds", "histogram", "Time from TaskBegin to placement.");
  for (const v1::WaitBucket &b : c.wait_buckets()) {
    w.Sample("mgb_task_wait_seconds_bucket", "le=\"" + Number(b.le_seconds()) + "\"",
             static_cast<double>(b.count()));
  }
  w.Sample("mgb_task_wait_seconds_sum", "", c.wait_seconds_sum());
  w.Sample("mgb_task_wait_seconds_count", "", static_cast<double>(c.wait_count()));
  return w.Text();
}

}  // namespace mgb::metrics
