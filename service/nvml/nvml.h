// mgbd's view of NVML (loaded by nvml_library.h): the GPU inventory (name, memory, SMs, per-SM
// limits, uuid, PCI bus id) and each GPU's free/used memory for the scheduler's NVML term.
#ifndef MGB_SERVICE_NVML_NVML_H
#define MGB_SERVICE_NVML_NVML_H

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "mgb/core/gpu.h"
#include "nvml_library.h"

namespace mgb::nvml {

struct DeviceMemory {
  uint64_t free_bytes = 0;
  uint64_t used_bytes = 0;
};

class Nvml {
 public:
  // FAILED_PRECONDITION naming the library (Library::Path()) when it or a symbol is missing.
  static absl::StatusOr<std::unique_ptr<Nvml>> Load();
  ~Nvml();

  // Every GPU NVML lists, in NVML's order, with has_nvml set.
  absl::StatusOr<std::vector<core::GpuSpec>> Inventory();
  absl::StatusOr<DeviceMemory> Memory(uint32_t index);

  Nvml(const Nvml &) = delete;
  Nvml &operator=(const Nvml &) = delete;

 private:
  explicit Nvml(std::unique_ptr<Library> library);
  std::unique_ptr<Library> library_;
};

}  // namespace mgb::nvml

#endif  // MGB_SERVICE_NVML_NVML_H
