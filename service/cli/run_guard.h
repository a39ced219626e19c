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

  // reserved: the task's reservation now; cap: --max-mem (0: none). Null with *error set when the
  // directory, ledger or channel cannot be made.
  static std::unique_ptr<RunGuard> Start(Client &client, uint64_t task_id, uint64_t reserved,
                                         uint64_t cap, const std::string &library,
                                         std::string *error);
  ~RunGuard();
  RunGuard(const RunGuard &) = delete;
  RunGuard &operator=(const RunGuard &) = delete;

  // Variables to set in the program's environment (LD_PRELOAD keeps the caller's entries after
  // ours).
  std::vector<std::pair<std::string, std::string>> Environment() const;

  struct Usage {
    bool guarded = false;  // the guard became active in at least one of the program's processes
    uint64_t allocated = 0;
    uint64_t peak = 0;
    uint64_t refusals = 0;
  };
  Usage Read();

 private:
  RunGuard(Client &client, uint64_t task_id, std::string dir, std::string library)
      : client_(client), task_id_(task_id), dir_(std::move(dir)), library_(std::move(library)) {}
  guard::GrowAnswer Grow(uint64_t missing_bytes);

  Client &client_;
  uint64_t task_id_;
  std::string dir_, library_;
  std::unique_ptr<guard::RunLedger> ledger_;
  std::unique_ptr<guard::GrowServer> server_;
};

}  // namespace mgb::cli

#endif  // MGB_SERVICE_CLI_RUN_GUARD_H
