#include "job_grant_file.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "state_file.h"

namespace mgb::server {

JobGrantList LoadJobGrants(const std::string &path, std::vector<std::string> *warnings) {
  JobGrantList grants;
  absl::StatusOr<std::string> text = ReadStateFile(path);
  if (!text.ok()) {
    if (!absl::IsNotFound(text.status())) {
      warnings->push_back(absl::StrCat(text.status().message(), " (no grants restored)"));
    }
    return grants;
  }
  size_t number = 0;
  for (const absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++number;
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
  return ReplaceStateFile(path, text);
}

}  // namespace mgb::server
