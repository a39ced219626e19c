// What a finished job's output says: its kernel times (MGB_KERNEL_MS lines), its verdict
// (MGB_RESULT), and whether it died of running out of device memory.
#ifndef MGB_TOOLS_BATCH_JOB_OUTPUT_H
#define MGB_TOOLS_BATCH_JOB_OUTPUT_H

#include <string>
#include <vector>

namespace mgb::batch {

struct KernelTime {
  std::string name;
  double ms = 0;
  long launches = 0;
};

struct JobOutput {
  std::vector<KernelTime> kernels;  // summed by name over all lines
  std::string result;               // "PASS", "FAIL" or "" when no MGB_RESULT line
  bool mentions_oom = false;        // "out of memory" (CUDA's message) anywhere in the output
  // libmgb's MGB_WAIT_MS lines (time blocked on mgbd: runtime/src/wait_clock.h), summed over the
  // job's processes; waits_reported is false when there was none (not a libmgb program).
  bool waits_reported = false;
  double wait_begin_ms = 0, wait_grow_ms = 0;
};

// Scans the job's stdout and stderr text.
JobOutput ParseJobOutput(const std::string &stdout_text, const std::string &stderr_text);

}  // namespace mgb::batch

#endif  // MGB_TOOLS_BATCH_JOB_OUTPUT_H
