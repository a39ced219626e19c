// GPU utilisation and memory over time, sampled through NVML loaded with dlopen at run time
// (no nvml.h or libnvidia-ml needed to build; absent NVML just means no samples).
#ifndef MGB_SERVICE_BATCH_GPU_SAMPLER_H
#define MGB_SERVICE_BATCH_GPU_SAMPLER_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

class GpuSampler {
 public:
  // Starts sampling every period_s on a thread; nullptr (with *why_not set) when NVML is absent.
  static std::unique_ptr<GpuSampler> Start(double period_s, std::string* why_not);
  ~GpuSampler();
  // Stops the thread (idempotent) and returns every sample taken.
  std::vector<GpuSample> Stop();

  GpuSampler(const GpuSampler&) = delete;
  GpuSampler& operator=(const GpuSampler&) = delete;

 private:
  struct Api;
  GpuSampler(std::unique_ptr<Api> api, double period_s);
  void Loop();

  std::unique_ptr<Api> api_;
  double period_s_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::vector<GpuSample> samples_;
  std::thread thread_;
};

}  // namespace mgb::batch

#endif  // MGB_SERVICE_BATCH_GPU_SAMPLER_H
