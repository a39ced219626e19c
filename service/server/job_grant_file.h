// The Slurm job grants mgbd holds (JobBegin), kept in a file so that a restarted mgbd still holds
// running jobs to them: one "job id<TAB>bytes" line per job, rewritten whole on every change.
#ifndef MGB_SERVICE_SERVER_JOB_GRANT_FILE_H
#define MGB_SERVICE_SERVER_JOB_GRANT_FILE_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace mgb::server {

using JobGrantList = std::vector<std::pair<uint64_t, uint64_t>>;  // (job id, bytes)

// The grants in `path`; none when it does not exist yet. Each line that cannot be read (and a
// file that cannot be opened) adds one warning naming the file and line, and is skipped.
JobGrantList LoadJobGrants(const std::string &path, std::vector<std::string> *warnings);
absl::Status SaveJobGrants(const std::string &path, const JobGrantList &grants);

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_JOB_GRANT_FILE_H
