#include "gpu_sampler.h"

#include <set>

#include "process_tree.h"

namespace mgb::batch {

using Clock = std::chrono::steady_clock;

std::unique_ptr<GpuSampler> GpuSampler::Start(double period_s, std::string *why_not) {
  std::string error;
  std::unique_ptr<nvml::Library> nvml = nvml::Library::Open(&error);
  if (!nvml || nvml->DeviceCount() == 0) {
    if (why_not) *why_not = (nvml ? "NVML found no GPU" : error) + ": no GPU samples";
    return nullptr;
  }
  return std::unique_ptr<GpuSampler>(new GpuSampler(std::move(nvml), period_s));
}

GpuSampler::GpuSampler(std::unique_ptr<nvml::Library> nvml, double period_s)
    : nvml_(std::move(nvml)), period_s_(period_s), start_(Clock::now()) {
  thread_ = std::thread([this] { Loop(); });
}

GpuSampler::~GpuSampler() { Stop(); }

void GpuSampler::BatchStarted(Clock::time_point start) {
  std::lock_guard<std::mutex> lock(mutex_);
  batch_start_ = start;
}

void GpuSampler::JobStarted(size_t job_index, pid_t pid) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_[pid] = job_index;
  record_.job_memory[job_index];  // a job that ran gets a (possibly empty) series
}

void GpuSampler::JobEnded(size_t job_index) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = running_.begin(); it != running_.end(); ++it) {
    if (it->second == job_index) {
      running_.erase(it);
      return;
    }
  }
}

GpuSample GpuSampler::ReadGpus(Clock::time_point now) const {
  GpuSample sample;
  sample.t_s = std::chrono::duration<double>(now - start_).count();
  std::string
      ignored;  // a failed read leaves zeros, as before: one bad reading is no reason to stop
  for (unsigned g = 0; g < nvml_->DeviceCount(); ++g) {
    GpuReading reading;
    nvml::Utilization u;
    nvml::MemoryInfo m;
    if (nvml_->GetUtilization(g, &u, &ignored)) {
      reading.util_percent = u.gpu_percent;
      reading.mem_util_percent = u.memory_percent;
    }
    if (nvml_->Memory(g, &m, &ignored)) {
      reading.mem_used_bytes = m.used_bytes;
      reading.mem_total_bytes = m.total_bytes;
    }
    sample.gpus.push_back(reading);
  }
  return sample;
}

bool GpuSampler::ReadJobMemory(const std::map<pid_t, size_t> &running,
                               std::map<pid_t, uint64_t> *bytes) {
  std::set<pid_t> roots;
  for (const auto &[pid, index] : running) roots.insert(pid);
  std::vector<nvml::ProcessMemory> processes;
  for (unsigned g = 0; g < nvml_->DeviceCount(); ++g) {
    if (!nvml_->ComputeProcesses(g, &processes, &listing_error_)) return false;
    for (const nvml::ProcessMemory &p : processes) {
      const pid_t pid = static_cast<pid_t>(p.pid);
      if (pid_t root = OwningRoot(pid, roots); root != 0) {
        (*bytes)[root] += p.used_bytes;
        job_listed_ = true;
      } else if (outsider_.empty()) {
        ProcStat stat;
        outsider_ = "pid " + std::to_string(pid);
        if (ReadProcStat(pid, &stat)) outsider_ += " (" + stat.comm + ")";
      }
    }
  }
  listed_once_ = true;
  return true;
}

std::optional<double> GpuSampler::RecentBusy(double window_s) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::vector<GpuSample> &samples = record_.gpu_samples;
  if (samples.empty()) return std::nullopt;
  const double since = samples.back().t_s - window_s;
  double sum = 0;
  size_t count = 0;
  for (auto it = samples.rbegin(); it != samples.rend() && it->t_s >= since; ++it) {
    for (const GpuReading &g : it->gpus) {
      sum += g.util_percent / 100.0;
      ++count;
    }
  }
  if (count == 0) return std::nullopt;
  return sum / static_cast<double>(count);
}

void GpuSampler::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    // NVML and /proc are read without the lock: the runner's callbacks must not wait on them.
    const std::map<pid_t, size_t> running = running_;
    const std::optional<Clock::time_point> batch_start = batch_start_;
    lock.unlock();
    const Clock::time_point now = Clock::now();
    GpuSample sample = ReadGpus(now);
    std::map<pid_t, uint64_t> bytes;
    const bool listed = batch_start && !running.empty() && ReadJobMemory(running, &bytes);
    lock.lock();
    record_.gpu_samples.push_back(std::move(sample));
    if (listed) {
      const double t_s = std::chrono::duration<double>(now - *batch_start).count();
      for (const auto &[pid, index] : running)
        record_.job_memory[index].push_back({t_s, bytes[pid]});
    }
    wake_.wait_for(lock, std::chrono::duration<double>(period_s_), [this] { return stopping_; });
  }
}

SamplerRecord GpuSampler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return {};
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  SamplerRecord record = std::move(record_);
  if (!listed_once_ && !listing_error_.empty()) {
    record.per_process_memory = "unavailable: " + listing_error_;
  } else if (listed_once_ && !job_listed_ && !outsider_.empty()) {
    // MPS: clients' memory is charged to the server, which is the only process NVML lists.
    record.per_process_memory =
        "unavailable: NVML listed GPU processes while jobs ran, but none "
        "of the jobs' (e.g. " +
        outsider_ +
        "); under MPS NVML may list "
        "only the MPS server, not its clients";
  }
  if (!record.per_process_memory.empty()) record.job_memory.clear();
  return record;
}

void AttachJobMemory(std::map<size_t, std::vector<MemorySample>> job_memory, BatchResult *result) {
  for (auto &[index, series] : job_memory) {
    if (index >= result->records.size()) continue;
    result->records[index].memory_sampled = true;
    result->records[index].memory_samples = std::move(series);
  }
}

}  // namespace mgb::batch
