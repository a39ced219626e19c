#include "gpu_sampler.h"

#include <dlfcn.h>

namespace mgb::batch {

// The few NVML declarations used (stable C ABI since NVML 2.x).
struct GpuSampler::Api {
  using Device = void*;
  struct Utilization {
    unsigned gpu, memory;
  };
  struct Memory {
    unsigned long long total, free, used;
  };
  void* library = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*handle)(unsigned, Device*) = nullptr;
  int (*utilization)(Device, Utilization*) = nullptr;
  int (*memory)(Device, Memory*) = nullptr;
  std::vector<Device> devices;

  ~Api() {
    if (shutdown) shutdown();
    if (library) dlclose(library);
  }
};

std::unique_ptr<GpuSampler> GpuSampler::Start(double period_s, std::string* why_not) {
  auto api = std::make_unique<Api>();
  api->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!api->library) {
    if (why_not) *why_not = "libnvidia-ml.so.1 not found: no GPU samples";
    return nullptr;
  }
  auto sym = [&](const char* name) { return dlsym(api->library, name); };
  api->init = reinterpret_cast<int (*)()>(sym("nvmlInit_v2"));
  api->shutdown = reinterpret_cast<int (*)()>(sym("nvmlShutdown"));
  api->count = reinterpret_cast<int (*)(unsigned*)>(sym("nvmlDeviceGetCount_v2"));
  api->handle = reinterpret_cast<int (*)(unsigned, Api::Device*)>(sym("nvmlDeviceGetHandleByIndex_v2"));
  api->utilization = reinterpret_cast<int (*)(Api::Device, Api::Utilization*)>(sym("nvmlDeviceGetUtilizationRates"));
  api->memory = reinterpret_cast<int (*)(Api::Device, Api::Memory*)>(sym("nvmlDeviceGetMemoryInfo"));
  if (!api->init || !api->shutdown || !api->count || !api->handle || !api->utilization || !api->memory) {
    if (why_not) *why_not = "libnvidia-ml.so.1 lacks a needed symbol: no GPU samples";
    api->shutdown = nullptr;
    return nullptr;
  }
  unsigned count = 0;
  if (api->init() != 0 || api->count(&count) != 0 || count == 0) {
    if (why_not) *why_not = "NVML found no GPU: no GPU samples";
    return nullptr;
  }
  for (unsigned i = 0; i < count; ++i) {
    Api::Device d = nullptr;
    if (api->handle(i, &d) == 0) api->devices.push_back(d);
  }
  return std::unique_ptr<GpuSampler>(new GpuSampler(std::move(api), period_s));
}

GpuSampler::GpuSampler(std::unique_ptr<Api> api, double period_s)
    : api_(std::move(api)), period_s_(period_s), start_(std::chrono::steady_clock::now()) {
  thread_ = std::thread([this] { Loop(); });
}

GpuSampler::~GpuSampler() { Stop(); }

void GpuSampler::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    GpuSample sample;
    sample.t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    for (Api::Device d : api_->devices) {
      GpuReading reading;
      Api::Utilization u{};
      Api::Memory m{};
      if (api_->utilization(d, &u) == 0) {
        reading.util_percent = u.gpu;
        reading.mem_util_percent = u.memory;
      }
      if (api_->memory(d, &m) == 0) {
        reading.mem_used_bytes = m.used;
        reading.mem_total_bytes = m.total;
      }
      sample.gpus.push_back(reading);
    }
    samples_.push_back(std::move(sample));
    wake_.wait_for(lock, std::chrono::duration<double>(period_s_), [this] { return stopping_; });
  }
}

std::vector<GpuSample> GpuSampler::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  return samples_;
}

}  // namespace mgb::batch
