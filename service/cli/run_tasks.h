// The tasks of one `mgb run`: one per GPU the program uses (--gpus N), each learned as the
// program's, all granted before the program starts.
#ifndef MGB_SERVICE_CLI_RUN_TASKS_H
#define MGB_SERVICE_CLI_RUN_TASKS_H

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mgb/client.h"
#include "program_identity.h"

namespace mgb::cli {

// Begins `gpus` tasks of `memory` bytes each (0: mgbd's learned peak or default) and waits until
// all are placed. One GPU: wherever mgbd places it. Several: on as many distinct GPUs, chosen
// among those with the most memory available and taken in index order, so that two runs of
// several GPUs never each hold a GPU the other waits for. Each GPU's task learns its own peak
// (the program's key with "[GPU k of N]" after it). On failure no task is left begun.
absl::StatusOr<std::vector<Placement>> BeginRunTasks(Client &client,
                                                     const ProgramIdentity &identity,
                                                     uint64_t memory, int gpus,
                                                     const LaunchShape &shape,
                                                     const std::string &label);

}  // namespace mgb::cli

#endif  // MGB_SERVICE_CLI_RUN_TASKS_H
