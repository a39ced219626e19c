// The job list `mgb batch` runs: JSON {"jobs": [{"name", "argv", "memory_bytes",
// "host_memory_bytes", "arrival_s"}]} (all but name and argv optional).
#ifndef MGB_TOOLS_BATCH_JOB_LIST_H
#define MGB_TOOLS_BATCH_JOB_LIST_H

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mgb::batch {

struct Job {
  std::string name;
  std::vector<std::string> argv;   // argv[0] is the program (PATH is searched)
  uint64_t memory_bytes = 0;       // estimate, for policies and reports; 0 = unknown
  uint64_t host_memory_bytes = 0;  // estimate of its peak host memory; 0 = unknown
  double arrival_s = 0;            // offset from the batch start at which the job is queued
  std::string workload;            // optional: the workload it runs (mix generator fills it)
  double gb = 0;                   // optional: its --gb size
};

// Parses and validates a job list; `source` names the file in error messages
// (InvalidArgument "<source>: jobs[3].argv: ...", NotFound when the file cannot be opened).
absl::StatusOr<std::vector<Job>> ParseJobList(const std::string &text, const std::string &source);
absl::StatusOr<std::vector<Job>> LoadJobList(const std::string &path);

std::string JobListToJson(const std::vector<Job> &jobs);

}  // namespace mgb::batch

#endif  // MGB_TOOLS_BATCH_JOB_LIST_H
