// RunGuard: `mgb run`'s side of the driver-level guard (guard/). It finds libmgb-guard.so, makes
// the run's private directory with the ledger and the grow channel, names them in the program's
// environment (LD_PRELOAD, MGB_GUARD_DIR), grows the task through mgbd when the guard asks, and
// reads back what the program allocated. Gone with the run: the directory is removed.
#ifndef MGB_SERVICE_CLI_RUN_GUARD_H
#define MGB_SERVICE_CLI_RUN_GUARD_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "grow_channel.h"
#include "mgb/client.h"
#include "run_ledger.h"

namespace mgb::cli {

class RunGuard {
 public:
  // The guard library: $MGB_GUARD_LIB, else beside this executable's install or build tree.
  static std::optional<std::string> FindLibrary();
  // Why the guard library cannot be loaded (ld.so would skip it with a warning); none if it can.
  static std::optional<std::string> Unloadable(const std::string &library);

  // One task per GPU of the run, in the program's CUDA order: its id and reservation now.
  struct GpuTask {
    uint64_t task_id = 0;
    uint64_t reserved = 0;
  };
  // cap: --max-mem per GPU (0: none); spill: a grow mgbd cannot grant without waiting forever is
  // served from host memory (guarded_driver.h). Null with *error set when the directory, ledger
  // or channel cannot be made.
  static std::unique_ptr<RunGuard> Start(Client &client, std::vector<GpuTask> tasks, uint64_t cap,
                                         bool spill, const std::string &library,
                                         std::string *error);
  ~RunGuard();
  RunGuard(const RunGuard &) = delete;
  RunGuard &operator=(const RunGuard &) = delete;

  // Variables to set in the program's environment (LD_PRELOAD keeps the caller's entries after
  // ours).
  std::vector<std::pair<std::string, std::string>> Environment() const;

  struct Usage {
    bool guarded = false;  // the guard became active in at least one of the program's processes
    std::vector<uint64_t> allocated, peak;  // per GPU of the run
    uint64_t refusals = 0;
    uint64_t spilled = 0;  // bytes in host memory now
  };
  Usage Read();
  // What mgbd says the run could hold on its GPU `gpu` now (TaskUsage): the guard's cuMemGetInfo.
  void SetRoom(size_t gpu, uint64_t room_bytes);

 private:
  RunGuard(Client &client, std::vector<GpuTask> tasks, std::string dir, std::string library,
           bool spill)
      : client_(client),
        tasks_(std::move(tasks)),
        dir_(std::move(dir)),
        library_(std::move(library)),
        spill_(spill) {}
  guard::GrowAnswer Grow(uint64_t missing_bytes, uint32_t gpu);

  Client &client_;
  std::vector<GpuTask> tasks_;
  std::string dir_, library_;
  bool spill_;
  std::unique_ptr<guard::RunLedger> ledger_;
  std::unique_ptr<guard::GrowServer> server_;
};

}  // namespace mgb::cli

#endif  // MGB_SERVICE_CLI_RUN_GUARD_H
