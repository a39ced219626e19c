// NVML's entry points, declared here with the layouts of NVML's public header (there is no nvml.h
// on the build machine) and resolved with dlsym.
#include "nvml_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <type_traits>

namespace mgb::nvml {
namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = void *;
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kInsufficientSize = 7;             // NVML_ERROR_INSUFFICIENT_SIZE
constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlUtilization_t {
  unsigned int gpu, memory;
};
struct nvmlPciInfo_t {  // nvmlPciInfo_v3 layout, as nvmlDeviceGetPciInfo_v3 fills it
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct nvmlProcessInfo_t {  // nvmlProcessInfo_v2_t: what both _v2 and _v3 fill
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};

}  // namespace

struct Library::Api {
  void *lib = nullptr;
  nvmlReturn_t (*Init)() = nullptr;
  nvmlReturn_t (*Shutdown)() = nullptr;
  nvmlReturn_t (*GetCount)(unsigned int *) = nullptr;
  nvmlReturn_t (*GetHandle)(unsigned int, nvmlDevice_t *) = nullptr;
  nvmlReturn_t (*GetName)(nvmlDevice_t, char *, unsigned int) = nullptr;
  nvmlReturn_t (*GetUuid)(nvmlDevice_t, char *, unsigned int) = nullptr;
  nvmlReturn_t (*GetPci)(nvmlDevice_t, nvmlPciInfo_t *) = nullptr;
  nvmlReturn_t (*GetMemory)(nvmlDevice_t, nvmlMemory_t *) = nullptr;
  nvmlReturn_t (*GetUtilization)(nvmlDevice_t, nvmlUtilization_t *) = nullptr;
  nvmlReturn_t (*GetCores)(nvmlDevice_t, unsigned int *) = nullptr;
  nvmlReturn_t (*GetCapability)(nvmlDevice_t, int *, int *) = nullptr;
  // Optional: absent on drivers older than each version; null = per-process memory unknown.
  nvmlReturn_t (*GetProcesses)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_t *) = nullptr;
  const char *processes_call = "nvmlDeviceGetComputeRunningProcesses_v3";
  const char *(*ErrorString)(nvmlReturn_t) = nullptr;
  bool initialised = false;

  std::string Error(const char *call, nvmlReturn_t rc) const {
    return std::string("NVML ") + call + " failed: " + (ErrorString ? ErrorString(rc) : "") + " (" +
           std::to_string(rc) + ")";
  }
  ~Api() {
    if (initialised) Shutdown();
    if (lib) dlclose(lib);
  }
};

std::string Library::Path() {
  const char *path = std::getenv("MGB_NVML_LIBRARY");
  return path && *path ? path : "libnvidia-ml.so.1";
}

std::unique_ptr<Library> Library::Open(std::string *error) {
  const std::string path = Path();
  auto api = std::make_unique<Api>();
  api->lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!api->lib) {
    *error = "cannot load " + path + " (" + dlerror() + "): no NVIDIA driver here";
    return nullptr;
  }
  std::string missing;
  auto bind = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(api->lib, name));
    if (!fn) missing += std::string(" ") + name;
  };
  bind(api->Init, "nvmlInit_v2");
  bind(api->Shutdown, "nvmlShutdown");
  bind(api->GetCount, "nvmlDeviceGetCount_v2");
  bind(api->GetHandle, "nvmlDeviceGetHandleByIndex_v2");
  bind(api->GetName, "nvmlDeviceGetName");
  bind(api->GetUuid, "nvmlDeviceGetUUID");
  bind(api->GetPci, "nvmlDeviceGetPciInfo_v3");
  bind(api->GetMemory, "nvmlDeviceGetMemoryInfo");
  bind(api->GetUtilization, "nvmlDeviceGetUtilizationRates");
  bind(api->GetCores, "nvmlDeviceGetNumGpuCores");
  bind(api->GetCapability, "nvmlDeviceGetCudaComputeCapability");
  bind(api->ErrorString, "nvmlErrorString");
  if (!missing.empty()) {
    *error = path + " lacks:" + missing + " (driver too old?)";
    return nullptr;
  }
  bind(api->GetProcesses, api->processes_call);
  if (!api->GetProcesses) {
    api->processes_call = "nvmlDeviceGetComputeRunningProcesses_v2";
    bind(api->GetProcesses, api->processes_call);
  }
  if (nvmlReturn_t rc = api->Init(); rc != kSuccess) {
    *error = api->Error("nvmlInit_v2", rc);
    return nullptr;
  }
  api->initialised = true;
  std::unique_ptr<Library> library(new Library(std::move(api)));
  unsigned count = 0;
  if (nvmlReturn_t rc = library->api_->GetCount(&count); rc != kSuccess) {
    *error = library->api_->Error("nvmlDeviceGetCount_v2", rc);
    return nullptr;
  }
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    if (nvmlReturn_t rc = library->api_->GetHandle(i, &device); rc != kSuccess) {
      *error = library->api_->Error("nvmlDeviceGetHandleByIndex_v2", rc) + " for GPU " +
               std::to_string(i);
      return nullptr;
    }
    library->devices_.push_back(device);
  }
  return library;
}

Library::Library(std::unique_ptr<Api> api) : api_(std::move(api)) {}
Library::~Library() = default;

namespace {
bool OutOfRange(unsigned gpu, size_t count, std::string *error) {
  if (gpu < count) return false;
  *error = "NVML GPU index " + std::to_string(gpu) + " out of range (" + std::to_string(count) +
           " GPUs)";
  return true;
}
}  // namespace

bool Library::Memory(unsigned gpu, MemoryInfo *out, std::string *error) const {
  if (OutOfRange(gpu, devices_.size(), error)) return false;
  nvmlMemory_t m{};
  if (nvmlReturn_t rc = api_->GetMemory(devices_[gpu], &m); rc != kSuccess) {
    *error = api_->Error("nvmlDeviceGetMemoryInfo", rc);
    return false;
  }
  *out = MemoryInfo{m.total, m.free, m.used};
  return true;
}

bool Library::GetUtilization(unsigned gpu, Utilization *out, std::string *error) const {
  if (OutOfRange(gpu, devices_.size(), error)) return false;
  nvmlUtilization_t u{};
  if (nvmlReturn_t rc = api_->GetUtilization(devices_[gpu], &u); rc != kSuccess) {
    *error = api_->Error("nvmlDeviceGetUtilizationRates", rc);
    return false;
  }
  *out = Utilization{u.gpu, u.memory};
  return true;
}

bool Library::Identity(unsigned gpu, DeviceIdentity *out, std::string *error) const {
  if (OutOfRange(gpu, devices_.size(), error)) return false;
  nvmlDevice_t device = devices_[gpu];
  DeviceIdentity id;
  char text[96] = {};
  if (api_->GetName(device, text, sizeof text) == kSuccess) id.name = text;
  if (api_->GetUuid(device, text, sizeof text) == kSuccess) id.uuid = text;
  nvmlPciInfo_t pci{};
  if (api_->GetPci(device, &pci) == kSuccess) id.pci_bus_id = pci.busId;
  api_->GetCapability(device, &id.cc_major, &id.cc_minor);
  if (nvmlReturn_t rc = api_->GetCores(device, &id.cores); rc != kSuccess || id.cores == 0) {
    *error = api_->Error("nvmlDeviceGetNumGpuCores", rc);
    return false;
  }
  *out = std::move(id);
  return true;
}

bool Library::ComputeProcesses(unsigned gpu, std::vector<ProcessMemory> *out,
                               std::string *error) const {
  if (OutOfRange(gpu, devices_.size(), error)) return false;
  if (!api_->GetProcesses) {
    *error = Path() + " has neither nvmlDeviceGetComputeRunningProcesses_v3 nor _v2";
    return false;
  }
  // The list can grow between the sizing call and the filling one: retry with the new count.
  std::vector<nvmlProcessInfo_t> infos(16);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned count = static_cast<unsigned>(infos.size());
    nvmlReturn_t rc = api_->GetProcesses(devices_[gpu], &count, infos.data());
    if (rc == kInsufficientSize) {
      infos.resize(count + 8);
      continue;
    }
    if (rc != kSuccess) {
      *error = api_->Error(api_->processes_call, rc);
      return false;
    }
    out->clear();
    for (unsigned i = 0; i < count && i < infos.size(); ++i) {
      const unsigned long long used = infos[i].usedGpuMemory;
      out->push_back({infos[i].pid, used == kValueNotAvailable ? 0 : used});
    }
    return true;
  }
  *error = std::string("NVML ") + api_->processes_call + ": the process list kept growing";
  return false;
}

}  // namespace mgb::nvml
