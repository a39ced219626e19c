// What earlier `mgb batch` runs say of each job's run time, so that a new run can start the
// longest jobs first (longest-processing-time order: the long jobs set the makespan, the short
// ones fill the gaps beside them), and its peak host memory, for the host memory gate
// (host_memory.h). A job is known by its command line (argv joined by spaces).
#ifndef MGB_TOOLS_BATCH_RUN_HISTORY_H
#define MGB_TOOLS_BATCH_RUN_HISTORY_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "job_list.h"

namespace mgb::batch {

struct RunHistory {
  // Command line -> run times (seconds) of its runs that exited 0.
  std::map<std::string, std::vector<double>> run_s;
  // Command line -> the largest host memory peak (host_peak_bytes) of its finished runs, crashed
  // ones included (what a run reached before it died, it needed).
  std::map<std::string, uint64_t> host_peak_bytes;
};

std::string CommandLine(const Job &job);

// Reads the JSON files that `mgb batch --out` wrote. A crashed or unfinished job adds nothing.
// InvalidArgument names the file and field ("<file>: jobs[2].run_s: ..."), NotFound a file that
// cannot be read.
absl::StatusOr<RunHistory> LoadRunHistory(const std::vector<std::string> &paths);
absl::StatusOr<RunHistory> ParseRunHistory(const std::string &text, const std::string &source,
                                           RunHistory history);

// Each job's expected run time: the median of its recorded runs, or -1 when never seen.
std::vector<double> ExpectedRunTimes(const std::vector<Job> &jobs, const RunHistory &history);

}  // namespace mgb::batch

#endif  // MGB_TOOLS_BATCH_RUN_HISTORY_H
