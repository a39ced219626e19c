#include "child_gpu_memory.h"

#include <set>
#include <vector>

#include "process_tree.h"

namespace mgb::cli {

std::unique_ptr<ChildGpuMemory> ChildGpuMemory::Open(const std::string &gpu_uuid) {
  if (gpu_uuid.empty()) return nullptr;
  std::string error;
  std::unique_ptr<nvml::Library> library = nvml::Library::Open(&error);
  if (!library) return nullptr;
  for (unsigned gpu = 0; gpu < library->DeviceCount(); ++gpu) {
    nvml::DeviceIdentity identity;
    if (library->Identity(gpu, &identity, &error) && identity.uuid == gpu_uuid) {
      return std::unique_ptr<ChildGpuMemory>(new ChildGpuMemory(std::move(library), gpu));
    }
  }
  return nullptr;
}

std::optional<uint64_t> ChildGpuMemory::Bytes(pid_t root) const {
  std::vector<nvml::ProcessMemory> processes;
  std::string error;
  if (!library_->ComputeProcesses(gpu_, &processes, &error)) return std::nullopt;
  const std::set<pid_t> roots = {root};
  uint64_t total = 0;
  for (const nvml::ProcessMemory &p : processes) {
    if (batch::OwningRoot(static_cast<pid_t>(p.pid), roots) == root) total += p.used_bytes;
  }
  return total;
}

}  // namespace mgb::cli
