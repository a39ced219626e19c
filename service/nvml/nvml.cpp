// The few NVML entry points mgbd uses, declared here (there is no nvml.h on the build machine)
// with the layouts of NVML's public header, and resolved with dlsym.
#include "nvml.h"

#include <dlfcn.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace mgb::nvml {
namespace {

using nvmlReturn_t = int;  // NVML_SUCCESS == 0
using nvmlDevice_t = struct nvmlDevice_st *;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlPciInfo_t {  // nvmlPciInfo_v3 layout, as nvmlDeviceGetPciInfo_v3 fills it
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

// Per-SM limits by compute capability (CUDA programming guide, "Compute Capabilities" table).
struct ArchLimits {
  int major, minor;
  uint32_t cores_per_sm, max_blocks, max_warps, shared_bytes;
};
constexpr ArchLimits kArchs[] = {
    {7, 0, 64, 32, 64, 96 * 1024},   {7, 5, 64, 16, 32, 64 * 1024},
    {8, 0, 64, 32, 64, 164 * 1024},  {8, 6, 128, 16, 48, 100 * 1024},
    {8, 7, 128, 16, 48, 164 * 1024}, {8, 9, 128, 24, 48, 100 * 1024},
    {9, 0, 128, 32, 64, 228 * 1024}, {10, 0, 128, 32, 64, 228 * 1024},
    {12, 0, 128, 32, 48, 100 * 1024},
};

}  // namespace

struct Nvml::Api {
  void *lib = nullptr;
  nvmlReturn_t (*Init)();
  nvmlReturn_t (*Shutdown)();
  nvmlReturn_t (*GetCount)(unsigned int *);
  nvmlReturn_t (*GetHandle)(unsigned int, nvmlDevice_t *);
  nvmlReturn_t (*GetName)(nvmlDevice_t, char *, unsigned int);
  nvmlReturn_t (*GetUuid)(nvmlDevice_t, char *, unsigned int);
  nvmlReturn_t (*GetPci)(nvmlDevice_t, nvmlPciInfo_t *);
  nvmlReturn_t (*GetMemory)(nvmlDevice_t, nvmlMemory_t *);
  nvmlReturn_t (*GetCores)(nvmlDevice_t, unsigned int *);
  nvmlReturn_t (*GetCapability)(nvmlDevice_t, int *, int *);
  const char *(*ErrorString)(nvmlReturn_t);
  std::vector<nvmlDevice_t> devices;

  std::string Error(const char *call, nvmlReturn_t rc) const {
    return absl::StrCat("NVML ", call, " failed: ", ErrorString != nullptr ? ErrorString(rc) : "",
                        " (", rc, ")");
  }
};

absl::StatusOr<std::unique_ptr<Nvml>> Nvml::Load() {
  auto api = std::make_unique<Api>();
  api->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (api->lib == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load libnvidia-ml.so.1 (", dlerror(),
        "): no NVIDIA driver here; describe the GPUs with --gpus FILE instead"));
  }
  bool missing = false;
  std::string missing_names;
  auto bind = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(api->lib, name));
    if (fn == nullptr) {
      missing = true;
      missing_names += absl::StrCat(" ", name);
    }
  };
  bind(api->Init, "nvmlInit_v2");
  bind(api->Shutdown, "nvmlShutdown");
  bind(api->GetCount, "nvmlDeviceGetCount_v2");
  bind(api->GetHandle, "nvmlDeviceGetHandleByIndex_v2");
  bind(api->GetName, "nvmlDeviceGetName");
  bind(api->GetUuid, "nvmlDeviceGetUUID");
  bind(api->GetPci, "nvmlDeviceGetPciInfo_v3");
  bind(api->GetMemory, "nvmlDeviceGetMemoryInfo");
  bind(api->GetCores, "nvmlDeviceGetNumGpuCores");
  bind(api->GetCapability, "nvmlDeviceGetCudaComputeCapability");
  bind(api->ErrorString, "nvmlErrorString");
  if (missing) {
    dlclose(api->lib);
    return absl::FailedPreconditionError(
        absl::StrCat("libnvidia-ml.so.1 lacks:", missing_names, " (driver too old?)"));
  }
  if (nvmlReturn_t rc = api->Init(); rc != 0) {
    std::string msg = api->Error("nvmlInit_v2", rc);
    dlclose(api->lib);
    return absl::FailedPreconditionError(msg);
  }
  return std::unique_ptr<Nvml>(new Nvml(std::move(api)));
}

Nvml::Nvml(std::unique_ptr<Api> api) : api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->Shutdown();
  dlclose(api_->lib);
}

absl::StatusOr<std::vector<core::GpuSpec>> Nvml::Inventory() {
  unsigned int count = 0;
  if (nvmlReturn_t rc = api_->GetCount(&count); rc != 0) {
    return absl::UnavailableError(api_->Error("nvmlDeviceGetCount_v2", rc));
  }
  if (count == 0) return absl::FailedPreconditionError("NVML lists no GPUs");
  std::vector<core::GpuSpec> gpus;
  api_->devices.assign(count, nullptr);
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t dev = nullptr;
    if (nvmlReturn_t rc = api_->GetHandle(i, &dev); rc != 0) {
      return absl::UnavailableError(api_->Error("nvmlDeviceGetHandleByIndex_v2", rc));
    }
    api_->devices[i] = dev;
    core::GpuSpec spec;
    spec.has_nvml = true;
    char text[96] = {};
    if (api_->GetName(dev, text, sizeof text) == 0) spec.name = text;
    if (api_->GetUuid(dev, text, sizeof text) == 0) spec.uuid = text;
    nvmlPciInfo_t pci{};
    if (api_->GetPci(dev, &pci) == 0) spec.pci_bus_id = pci.busId;
    nvmlMemory_t mem{};
    if (nvmlReturn_t rc = api_->GetMemory(dev, &mem); rc != 0) {
      return absl::UnavailableError(api_->Error("nvmlDeviceGetMemoryInfo", rc));
    }
    spec.memory_bytes = mem.total;
    int major = 0, minor = 0;
    api_->GetCapability(dev, &major, &minor);
    ArchLimits arch = kArchs[6];  // unknown architectures: assume Hopper's limits
    for (const ArchLimits &a : kArchs) {
      if (a.major == major && a.minor == minor) arch = a;
    }
    unsigned int cores = 0;
    if (nvmlReturn_t rc = api_->GetCores(dev, &cores); rc != 0 || cores == 0) {
      return absl::UnavailableError(api_->Error("nvmlDeviceGetNumGpuCores", rc));
    }
    spec.sms = cores / arch.cores_per_sm;
    spec.sm = core::SmLimits{arch.max_blocks, arch.max_warps, 65536, arch.shared_bytes};
    gpus.push_back(std::move(spec));
  }
  return gpus;
}

absl::StatusOr<DeviceMemory> Nvml::Memory(uint32_t index) {
  if (index >= api_->devices.size()) {
    return absl::OutOfRangeError(absl::StrCat("NVML GPU index ", index, " out of range"));
  }
  nvmlMemory_t mem{};
  if (nvmlReturn_t rc = api_->GetMemory(api_->devices[index], &mem); rc != 0) {
    return absl::UnavailableError(api_->Error("nvmlDeviceGetMemoryInfo", rc));
  }
  return DeviceMemory{mem.free, mem.used};
}

}  // namespace mgb::nvml
