// Host memory as a start condition for `mgb batch`. mgbd keeps GPU memory from being
// over-granted, but a CUDA program takes its host buffers before its first task asks mgbd for a
// GPU, so jobs waiting in mgbd's queue still hold host memory: sixteen Rodinia jobs at once came
// within 19 GiB of a 252 GiB host (docs/evaluation.md), and the kernel's OOM killer takes a job
// where they do not fit. The gate starts the next job only when the node's available memory, less
// what the running jobs are still expected to take, covers the job's expected peak and a reserve.
#ifndef MGB_TOOLS_BATCH_HOST_MEMORY_H
#define MGB_TOOLS_BATCH_HOST_MEMORY_H

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace mgb::batch {

// A running job as the gate sees it: what it is expected to hold at its peak (0: unknown) and
// what it holds now.
struct RunningHostMemory {
  uint64_t expected_peak = 0;
  uint64_t resident = 0;
};

struct HostMemoryVerdict {
  bool admit = true;
  uint64_t available = 0;  // MemAvailable
  uint64_t pending = 0;    // what the running jobs are still expected to take
  uint64_t needed = 0;     // the job's expected peak plus the reserve
};

// The rule, without the system: admit when nothing runs (a job bigger than the node still gets
// its turn, alone) or when available - pending >= expected_peak + reserve.
HostMemoryVerdict DecideHostMemory(uint64_t available, uint64_t reserve, uint64_t expected_peak,
                                   const std::vector<RunningHostMemory> &running);

// MemAvailable (or MemTotal) from a /proc/meminfo-format file, in bytes; empty when absent.
std::optional<uint64_t> ReadMeminfoField(const std::string &meminfo_path, const std::string &field);

// The resident set of one process (PROC_ROOT/<pid>/statm's second field, in pages); 0 when gone.
uint64_t ResidentBytes(pid_t pid, const std::string &proc_root = "/proc");

// The resident sets of every process in each of `groups` (the runner starts each job in a process
// group of its own, so a wrapper's children count with it), by group.
std::map<pid_t, uint64_t> GroupResidentBytes(const std::set<pid_t> &groups,
                                             const std::string &proc_root = "/proc");

// The gate as the runner uses it: the system's files, the reserve, and each job's expected peak.
class HostMemoryGate {
 public:
  // reserve: kept free beyond every expectation. meminfo_path: /proc/meminfo, or a file a test
  // writes.
  HostMemoryGate(uint64_t reserve, std::string meminfo_path, std::string proc_root = "/proc");

  // Whether a job expected to peak at `expected_peak` may start beside `running` (process group,
  // expected peak). Admits when the meminfo file cannot be read: no view, no gate.
  HostMemoryVerdict Admits(uint64_t expected_peak,
                           const std::vector<std::pair<pid_t, uint64_t>> &running) const;

  uint64_t reserve() const { return reserve_; }

 private:
  uint64_t reserve_;
  std::string meminfo_path_, proc_root_;
};

// The default reserve: 5% of the host's memory, at least 1 GiB (what the kernel, page cache the
// jobs read through, and the scheduler's own processes need beside the jobs).
uint64_t DefaultHostReserve(uint64_t mem_total);

}  // namespace mgb::batch

#endif  // MGB_TOOLS_BATCH_HOST_MEMORY_H
