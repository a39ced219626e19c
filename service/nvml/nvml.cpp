// The inventory mgbd starts from, built on the one NVML loader (nvml_library.h).
#include "nvml.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace mgb::nvml {
namespace {

// Per-SM limits by compute capability (CUDA programming guide, "Compute Capabilities" table).
struct ArchLimits {
  int major, minor;
  uint32_t cores_per_sm, max_blocks, max_warps, shared_bytes;
};
constexpr ArchLimits kArchs[] = {
    {7, 0, 64, 32, 64, 96 * 1024},    {7, 5, 64, 16, 32, 64 * 1024},
    {8, 0, 64, 32, 64, 164 * 1024},   {8, 6, 128, 16, 48, 100 * 1024},
    {8, 7, 128, 16, 48, 164 * 1024},  {8, 9, 128, 24, 48, 100 * 1024},
    {9, 0, 128, 32, 64, 228 * 1024},  {10, 0, 128, 32, 64, 228 * 1024},
    {12, 0, 128, 32, 48, 100 * 1024},
};

}  // namespace

absl::StatusOr<std::unique_ptr<Nvml>> Nvml::Load() {
  std::string error;
  std::unique_ptr<Library> library = Library::Open(&error);
  if (!library) {
    return absl::FailedPreconditionError(
        absl::StrCat(error, "; describe the GPUs with --gpus FILE instead"));
  }
  return std::unique_ptr<Nvml>(new Nvml(std::move(library)));
}

Nvml::Nvml(std::unique_ptr<Library> library) : library_(std::move(library)) {}

Nvml::~Nvml() = default;

absl::StatusOr<std::vector<core::GpuSpec>> Nvml::Inventory() {
  const unsigned count = library_->DeviceCount();
  if (count == 0) return absl::FailedPreconditionError("NVML lists no GPUs");
  std::vector<core::GpuSpec> gpus;
  std::string error;
  for (unsigned i = 0; i < count; ++i) {
    DeviceIdentity id;
    MemoryInfo mem;
    if (!library_->Identity(i, &id, &error) || !library_->Memory(i, &mem, &error)) {
      return absl::UnavailableError(absl::StrCat(error, " (GPU ", i, ")"));
    }
    core::GpuSpec spec;
    spec.has_nvml = true;
    spec.name = id.name;
    spec.uuid = id.uuid;
    spec.pci_bus_id = id.pci_bus_id;
    spec.memory_bytes = mem.total_bytes;
    ArchLimits arch = kArchs[6];  // unknown architectures: assume Hopper's limits
    for (const ArchLimits &a : kArchs) {
      if (a.major == id.cc_major && a.minor == id.cc_minor) arch = a;
    }
    spec.sms = id.cores / arch.cores_per_sm;
    spec.sm = core::SmLimits{arch.max_blocks, arch.max_warps, 65536, arch.shared_bytes};
    gpus.push_back(std::move(spec));
  }
  return gpus;
}

absl::StatusOr<DeviceMemory> Nvml::Memory(uint32_t index) {
  MemoryInfo mem;
  std::string error;
  if (index >= library_->DeviceCount()) {
    return absl::OutOfRangeError(absl::StrCat("NVML GPU index ", index, " out of range"));
  }
  if (!library_->Memory(index, &mem, &error)) return absl::UnavailableError(error);
  return DeviceMemory{mem.free_bytes, mem.used_bytes};
}

}  // namespace mgb::nvml
