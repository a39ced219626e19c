// RunUsage: what `mgb run` tells mgbd about its program's memory, per GPU of the run: the bytes
// it holds and its peak (mgbd learns the peak; without the report it would count the program's
// memory twice, in NVML's used bytes and as the unallocated grant), when they change and every 2 s
// regardless, since mgbd's answer is the room the guard's cuMemGetInfo shows.
#ifndef MGB_SERVICE_CLI_RUN_USAGE_H
#define MGB_SERVICE_CLI_RUN_USAGE_H

#include <cstdint>
#include <ctime>
#include <vector>

#include "mgb/client.h"
#include "run_guard.h"

namespace mgb::cli {

class RunUsage {
 public:
  // guard: null without one (the room then goes nowhere).
  RunUsage(Client &client, const std::vector<Placement> &placements, RunGuard *guard)
      : client_(client),
        placements_(placements),
        guard_(guard),
        reported_(placements.size(), 0),
        reported_peak_(placements.size(), 0),
        peak_(placements.size(), 0) {}

  // allocated and peak per GPU of the run (peak may be empty: the allocated bytes make it).
  void Report(const std::vector<uint64_t> &allocated, const std::vector<uint64_t> &peak);

 private:
  bool Due();  // 2 s since the last report

  Client &client_;
  const std::vector<Placement> &placements_;
  RunGuard *guard_;
  std::vector<uint64_t> reported_, reported_peak_, peak_;
  timespec last_{};
  bool warned_ = false;
};

}  // namespace mgb::cli

#endif  // MGB_SERVICE_CLI_RUN_USAGE_H
