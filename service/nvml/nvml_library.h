// The one NVML loader of mgb: dlopen of libnvidia-ml.so.1 (or $MGB_NVML_LIBRARY, so tests can load
// a fake) and the few entry points mgbd's inventory and `mgb batch`'s sampler use. Plain C++ (no
// Abseil, no scheduler types): the standalone mgb-batch carried to GPU machines links it too.
#ifndef MGB_SERVICE_NVML_NVML_LIBRARY_H
#define MGB_SERVICE_NVML_NVML_LIBRARY_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mgb::nvml {

struct MemoryInfo {
  uint64_t total_bytes = 0;
  uint64_t free_bytes = 0;
  uint64_t used_bytes = 0;
};

struct Utilization {
  unsigned gpu_percent = 0;     // time a kernel was running over NVML's last sample period
  unsigned memory_percent = 0;  // time device memory was read or written
};

struct ProcessMemory {
  uint32_t pid = 0;
  uint64_t used_bytes = 0;  // 0 where NVML cannot say (NVML_VALUE_NOT_AVAILABLE)
};

struct DeviceIdentity {
  std::string name, uuid, pci_bus_id;  // empty when NVML cannot say
  unsigned cores = 0;                  // CUDA cores
  int cc_major = 0, cc_minor = 0;      // compute capability
};

class Library {
 public:
  // The file dlopen'ed: $MGB_NVML_LIBRARY when set and not empty, else libnvidia-ml.so.1.
  static std::string Path();
  // Loads, binds and initialises NVML; nullptr with *error (naming the file and what is missing)
  // when there is no driver, a needed symbol is absent or nvmlInit_v2 fails.
  static std::unique_ptr<Library> Open(std::string *error);
  ~Library();

  unsigned DeviceCount() const { return static_cast<unsigned>(devices_.size()); }

  // Each returns false and sets *error naming the NVML call and its error text.
  bool Memory(unsigned gpu, MemoryInfo *out, std::string *error) const;
  bool GetUtilization(unsigned gpu, Utilization *out, std::string *error) const;
  bool Identity(unsigned gpu, DeviceIdentity *out, std::string *error) const;
  // Compute processes on the GPU with their memory (_v3, or _v2 on older drivers). Under MPS the
  // driver may list only the MPS server, not its clients.
  bool ComputeProcesses(unsigned gpu, std::vector<ProcessMemory> *out, std::string *error) const;

  Library(const Library &) = delete;
  Library &operator=(const Library &) = delete;

 private:
  struct Api;
  explicit Library(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
  std::vector<void *> devices_;  // nvmlDevice_t handles, in NVML's order
};

}  // namespace mgb::nvml

#endif  // MGB_SERVICE_NVML_NVML_LIBRARY_H
