// The `mgb status` table: mgbd's GPUs, running tasks and queue in human units. `mgb status` prints
// it once, `mgb top` again and again.
#ifndef MGB_SERVICE_CLI_STATUS_TABLE_H
#define MGB_SERVICE_CLI_STATUS_TABLE_H

#include "mgb.pb.h"

namespace mgb::cli {

void PrintTable(const v1::StatusReply &s);

}  // namespace mgb::cli

#endif  // MGB_SERVICE_CLI_STATUS_TABLE_H
