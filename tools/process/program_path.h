// Where a command lives: the one PATH lookup of mgb-batch's runner and the Slurm hooks.
#ifndef MGB_TOOLS_PROCESS_PROGRAM_PATH_H
#define MGB_TOOLS_PROCESS_PROGRAM_PATH_H

#include <string>

namespace mgb::batch {

// The file execv runs for `name`: itself when it names a path, else the first executable of that
// name on PATH (/usr/local/bin:/usr/bin:/bin when PATH is unset, as in Slurm's Prolog); the name
// itself when none is found, so that execv reports why. Safe to call before fork, not after:
// it allocates.
std::string ResolveProgram(const std::string &name);

}  // namespace mgb::batch

#endif  // MGB_TOOLS_PROCESS_PROGRAM_PATH_H
