// The GPU memory a program under `mgb run` and its descendants hold on the granted GPU, from
// NVML's per-process list: what `mgb run` reports to mgbd as the task's usage (TaskUsage).
#ifndef MGB_SERVICE_CLI_CHILD_GPU_MEMORY_H
#define MGB_SERVICE_CLI_CHILD_GPU_MEMORY_H

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "nvml_library.h"

namespace mgb::cli {

class ChildGpuMemory {
 public:
  // nullptr where there is nothing to measure: a config GPU (no UUID) or no NVML, or NVML does
  // not list that UUID.
  static std::unique_ptr<ChildGpuMemory> Open(const std::string &gpu_uuid);

  // Bytes held by `root` and its descendants; nullopt when NVML cannot list processes now.
  std::optional<uint64_t> Bytes(pid_t root) const;

 private:
  ChildGpuMemory(std::unique_ptr<nvml::Library> library, unsigned gpu)
      : library_(std::move(library)), gpu_(gpu) {}
  std::unique_ptr<nvml::Library> library_;
  unsigned gpu_;
};

}  // namespace mgb::cli

#endif  // MGB_SERVICE_CLI_CHILD_GPU_MEMORY_H
