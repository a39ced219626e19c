// Replacing a small state file whole (mgbd's learned peaks, Slurm job grants): a reader, or a
// crash, sees the old file or the new one, never half of one.
#ifndef MGB_SERVICE_SERVER_ATOMIC_FILE_H
#define MGB_SERVICE_SERVER_ATOMIC_FILE_H

#include <string>

#include "absl/status/status.h"

namespace mgb::server {

// Writes `text` to PATH.tmp.PID, syncs it and renames it over `path`. UNAVAILABLE naming the file
// and the system's reason on failure (the old file is left as it was).
absl::Status ReplaceFileAtomically(const std::string &path, const std::string &text);

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_ATOMIC_FILE_H
