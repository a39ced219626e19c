// A fake libnvidia-ml for tests, loaded through MGB_NVML_LIBRARY: the few nvml* symbols mgb uses,
// with scripted values. MGB_FAKE_NVML_GPUS: GPU count (default 2). MGB_FAKE_NVML_PROCS: a file of
// "gpu pid bytes" lines, re-read at every process listing (jobs under test append their own pid;
// the last line per GPU and pid wins; pids no longer alive are left out); unset: process listing
// fails with NVML_ERROR_NOT_SUPPORTED. Built twice: with FAKE_NVML_V2_ONLY it lacks the _v3 call.
#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <utility>

namespace {

constexpr int kSuccess = 0, kInvalidArgument = 2, kNotSupported = 3, kInsufficientSize = 7;
constexpr unsigned long long kTotalBytes = 80ULL << 30;
struct Device {
  unsigned index;
};
Device g_devices[16];

struct ProcessInfo {  // nvmlProcessInfo_v2_t
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
};
struct Memory {
  unsigned long long total, free, used;
};
struct Utilization {
  unsigned int gpu, memory;
};
struct PciInfo {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

unsigned GpuCount() {
  const char *n = std::getenv("MGB_FAKE_NVML_GPUS");
  unsigned count = n ? static_cast<unsigned>(std::atoi(n)) : 2;
  return count > 16 ? 16 : count;
}

bool Alive(unsigned pid) { return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

// (pid -> bytes) on one GPU from the script file; false when there is no script.
bool Processes(unsigned gpu, std::map<unsigned, unsigned long long> *out) {
  const char *path = std::getenv("MGB_FAKE_NVML_PROCS");
  if (!path) return false;
  std::ifstream in(path);
  unsigned g = 0, pid = 0;
  unsigned long long bytes = 0;
  while (in >> g >> pid >> bytes) {
    if (g == gpu) (*out)[pid] = bytes;
  }
  for (auto it = out->begin(); it != out->end();)
    it = Alive(it->first) ? std::next(it) : out->erase(it);
  return true;
}

int ListProcesses(Device *device, unsigned int *count, ProcessInfo *infos) {
  std::map<unsigned, unsigned long long> processes;
  if (!device || !count) return kInvalidArgument;
  if (!Processes(device->index, &processes)) return kNotSupported;
  if (*count < processes.size()) {
    *count = static_cast<unsigned>(processes.size());
    return kInsufficientSize;
  }
  unsigned i = 0;
  for (const auto &[pid, bytes] : processes) infos[i++] = ProcessInfo{pid, bytes, 0, 0};
  *count = i;
  return kSuccess;
}

}  // namespace

extern "C" {

int nvmlInit_v2() { return kSuccess; }
int nvmlShutdown() { return kSuccess; }
const char *nvmlErrorString(int rc) { return rc == kNotSupported ? "Not Supported" : "fake error"; }

int nvmlDeviceGetCount_v2(unsigned int *count) {
  *count = GpuCount();
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, Device **device) {
  if (index >= GpuCount()) return kInvalidArgument;
  g_devices[index].index = index;
  *device = &g_devices[index];
  return kSuccess;
}

int nvmlDeviceGetName(Device *device, char *name, unsigned int length) {
  std::snprintf(name, length, "Fake H200 %u", device->index);
  return kSuccess;
}

int nvmlDeviceGetUUID(Device *device, char *uuid, unsigned int length) {
  std::snprintf(uuid, length, "GPU-fake-%u", device->index);
  return kSuccess;
}

int nvmlDeviceGetPciInfo_v3(Device *device, PciInfo *pci) {
  std::memset(pci, 0, sizeof *pci);
  std::snprintf(pci->busId, sizeof pci->busId, "00000000:%02X:00.0", device->index + 0x18);
  return kSuccess;
}

int nvmlDeviceGetMemoryInfo(Device *device, Memory *memory) {
  std::map<unsigned, unsigned long long> processes;
  Processes(device->index, &processes);
  unsigned long long used = 0;
  for (const auto &[pid, bytes] : processes) used += bytes;
  *memory = Memory{kTotalBytes, kTotalBytes - used, used};
  return kSuccess;
}

int nvmlDeviceGetUtilizationRates(Device *device, Utilization *utilization) {
  *utilization = Utilization{40 + device->index, 7};
  return kSuccess;
}

int nvmlDeviceGetNumGpuCores(Device *, unsigned int *cores) {
  *cores = 132 * 128;  // an H100/H200: 132 SMs of 128 cores
  return kSuccess;
}

int nvmlDeviceGetCudaComputeCapability(Device *, int *major, int *minor) {
  *major = 9;
  *minor = 0;
  return kSuccess;
}

int nvmlDeviceGetComputeRunningProcesses_v2(Device *device, unsigned int *count,
                                            ProcessInfo *infos) {
  return ListProcesses(device, count, infos);
}

#ifndef FAKE_NVML_V2_ONLY
int nvmlDeviceGetComputeRunningProcesses_v3(Device *device, unsigned int *count,
                                            ProcessInfo *infos) {
  return ListProcesses(device, count, infos);
}
#endif

}  // extern "C"
