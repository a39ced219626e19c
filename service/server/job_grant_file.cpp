#include "job_grant_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "atomic_file.h"

namespace mgb::server {

JobGrantList LoadJobGrants(const std::string &path, std::vector<std::string> *warnings) {
  JobGrantList grants;
  std::ifstream in(path);
  if (!in) {
    if (errno != ENOENT)
      warnings->push_back(absl::StrCat(path, ": cannot read (", std::strerror(errno), ")"));
    return grants;
  }
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    std::vector<std::string> fields = absl::StrSplit(line, '\t');
    uint64_t job = 0, bytes = 0;
    if (fields.size() != 2 || !absl::SimpleAtoi(fields[0], &job) || job == 0 ||
        !absl::SimpleAtoi(fields[1], &bytes)) {
      warnings->push_back(
          absl::StrCat(path, ":", number, ": not \"job id<TAB>bytes\"; line skipped"));
      continue;
    }
    grants.emplace_back(job, bytes);
  }
  return grants;
}

absl::Status SaveJobGrants(const std::string &path, const JobGrantList &grants) {
  std::string text;
  for (const auto &[job, bytes] : grants) absl::StrAppend(&text, job, "\t", bytes, "\n");
  return ReplaceFileAtomically(path, text);
}

}  // namespace mgb::server
