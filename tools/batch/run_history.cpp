#include "run_history.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "json_checks.h"

namespace mgb::batch {

std::string CommandLine(const Job &job) {
  std::string line;
  for (const std::string &a : job.argv) line += (line.empty() ? "" : " ") + a;
  return line;
}

absl::StatusOr<RunHistory> ParseRunHistory(const std::string &text, const std::string &source,
                                           RunHistory history) {
  using nlohmann::json;
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("jobs") || !doc["jobs"].is_array()) {
    return absl::InvalidArgumentError(
        source + ": not the JSON of an `mgb batch --out` run (no \"jobs\" array)");
  }
  const json &jobs = doc["jobs"];
  for (size_t i = 0; i < jobs.size(); ++i) {
    const json &j = jobs[i];
    const std::string where = source + ": jobs[" + std::to_string(i) + "]";
    if (!j.is_object() || !j.contains("argv") || !j["argv"].is_array()) {
      return absl::InvalidArgumentError(where + ".argv: missing or not an array");
    }
    Job job;
    for (const json &a : j["argv"]) {
      if (!a.is_string()) {
        return absl::InvalidArgumentError(where + ".argv: every element must be a string");
      }
      job.argv.push_back(a.get<std::string>());
    }
    for (const char *field : {"run_s", "exit_code"}) {
      if (!j.contains(field) || !j[field].is_number()) {
        return absl::InvalidArgumentError(where + "." + field + ": missing or not a number");
      }
    }
    const bool succeeded = j["exit_code"].get<int>() == 0 && !j.value("crashed", false) &&
                           j.value("ended_s", -1.0) >= 0;
    if (succeeded) history.run_s[CommandLine(job)].push_back(j["run_s"].get<double>());
    if (j.contains("host_peak_bytes")) {
      const json &peak = j["host_peak_bytes"];
      if (!IsNonNegativeInteger(peak)) {
        return absl::InvalidArgumentError(where +
                                          ".host_peak_bytes: must be a non-negative integer");
      }
      uint64_t &known = history.host_peak_bytes[CommandLine(job)];
      known = std::max(known, peak.get<uint64_t>());
    }
  }
  return history;
}

absl::StatusOr<RunHistory> LoadRunHistory(const std::vector<std::string> &paths) {
  RunHistory history;
  for (const std::string &path : paths) {
    std::ifstream in(path);
    if (!in) return absl::NotFoundError(path + ": cannot read");
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<RunHistory> more = ParseRunHistory(text.str(), path, std::move(history));
    if (!more.ok()) return more.status();
    history = *std::move(more);
  }
  return history;
}

std::vector<double> ExpectedRunTimes(const std::vector<Job> &jobs, const RunHistory &history) {
  std::vector<double> expected;
  for (const Job &job : jobs) {
    auto it = history.run_s.find(CommandLine(job));
    if (it == history.run_s.end() || it->second.empty()) {
      expected.push_back(-1);
      continue;
    }
    std::vector<double> runs = it->second;
    std::sort(runs.begin(), runs.end());
    const size_t n = runs.size();
    expected.push_back(n % 2 ? runs[n / 2] : (runs[n / 2 - 1] + runs[n / 2]) / 2);
  }
  return expected;
}

}  // namespace mgb::batch
