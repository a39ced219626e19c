// GPU utilisation and memory over time, and each job's GPU memory over time, sampled through NVML
// (service/nvml's loader: dlopen at run time, so absent NVML just means no samples).
#ifndef MGB_TOOLS_BATCH_GPU_SAMPLER_H
#define MGB_TOOLS_BATCH_GPU_SAMPLER_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nvml_library.h"
#include "runner.h"

namespace mgb::batch {

struct GpuReading {
  unsigned util_percent = 0;      // NVML "gpu" utilisation: time a kernel was running
  unsigned mem_util_percent = 0;  // time device memory was read or written
  uint64_t mem_used_bytes = 0;
  uint64_t mem_total_bytes = 0;
};

struct GpuSample {
  double t_s = 0;  // since the sampler's start
  std::vector<GpuReading> gpus;
};

struct SamplerRecord {
  std::vector<GpuSample> gpu_samples;
  // Job index -> its processes' GPU memory (summed over GPUs) at each sample taken while it ran,
  // times since the batch start. Empty when per_process_memory is set.
  std::map<size_t, std::vector<MemorySample>> job_memory;
  std::string per_process_memory;  // empty: available; else "unavailable: <why>"
};

// Also a JobWatcher: give it to RunnerOptions::watcher so it knows which processes are whose.
class GpuSampler final : public JobWatcher {
 public:
  // Starts sampling every period_s on a thread; nullptr (with *why_not set) when NVML is absent.
  static std::unique_ptr<GpuSampler> Start(double period_s, std::string *why_not);
  ~GpuSampler() override;
  // Stops the thread and returns everything sampled (the first call; later calls return nothing).
  SamplerRecord Stop();
  // Mean kernel-time share (0..1) over the GPUs and the samples of the last window_s seconds;
  // nullopt before the first sample.
  std::optional<double> RecentBusy(double window_s);

  void BatchStarted(std::chrono::steady_clock::time_point start) override;
  void JobStarted(size_t job_index, pid_t pid) override;
  void JobEnded(size_t job_index) override;

  GpuSampler(const GpuSampler &) = delete;
  GpuSampler &operator=(const GpuSampler &) = delete;

 private:
  GpuSampler(std::unique_ptr<nvml::Library> nvml, double period_s);
  void Loop();
  GpuSample ReadGpus(std::chrono::steady_clock::time_point now) const;
  // Bytes per running job's root pid; false when NVML could not list processes.
  bool ReadJobMemory(const std::map<pid_t, size_t> &running, std::map<pid_t, uint64_t> *bytes);

  std::unique_ptr<nvml::Library> nvml_;
  double period_s_;
  std::chrono::steady_clock::time_point start_;
  std::thread thread_;  // started last, in the constructor's body

  std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  bool stopping_ = false;
  std::optional<std::chrono::steady_clock::time_point> batch_start_;
  std::map<pid_t, size_t> running_;  // job root pid -> job index
  SamplerRecord record_;
  // Whether per-process memory is available: written by the sampling thread, read by Stop after
  // the thread has ended.
  bool listed_once_ = false;   // a process listing succeeded while jobs ran
  std::string listing_error_;  // the last failed listing's error
  bool job_listed_ = false;    // NVML listed a process of some job
  std::string outsider_;  // a listed process no job owns, e.g. "pid 812 (nvidia-cuda-mps-server)"
};

// Moves each job's series into its record (memory_sampled set): what the JSON writer reads.
void AttachJobMemory(std::map<size_t, std::vector<MemorySample>> job_memory, BatchResult *result);

}  // namespace mgb::batch

#endif  // MGB_TOOLS_BATCH_GPU_SAMPLER_H
