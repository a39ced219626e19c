#include "job_list.h"

#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "json_checks.h"

namespace mgb::batch {
namespace {

using nlohmann::json;

// Reads one job; returns an error naming the field (relative to "jobs[i]") or "".
std::string ParseJob(const json &j, Job &job) {
  if (!j.is_object()) return ": must be an object";
  for (auto it = j.begin(); it != j.end(); ++it) {
    static const std::set<std::string> known = {
        "name", "argv", "memory_bytes", "host_memory_bytes", "arrival_s", "workload", "gb"};
    if (!known.count(it.key())) return "." + it.key() + ": unknown field";
  }
  if (!j.contains("name") || !j["name"].is_string() || j["name"].get<std::string>().empty())
    return ".name: must be a non-empty string";
  job.name = j["name"].get<std::string>();
  if (!j.contains("argv") || !j["argv"].is_array() || j["argv"].empty())
    return ".argv: must be a non-empty array of strings";
  for (size_t i = 0; i < j["argv"].size(); ++i) {
    const json &a = j["argv"][i];
    if (!a.is_string()) return ".argv[" + std::to_string(i) + "]: must be a string";
    job.argv.push_back(a.get<std::string>());
  }
  if (job.argv[0].empty()) return ".argv[0]: the program must not be empty";
  for (auto [field, bytes] : {std::pair{"memory_bytes", &job.memory_bytes},
                              std::pair{"host_memory_bytes", &job.host_memory_bytes}}) {
    if (!j.contains(field)) continue;
    const json &m = j[field];
    if (!IsNonNegativeInteger(m))
      return std::string(".") + field + ": must be a non-negative integer";
    *bytes = m.get<uint64_t>();
  }
  if (j.contains("arrival_s")) {
    const json &a = j["arrival_s"];
    if (!a.is_number() || a.get<double>() < 0) return ".arrival_s: must be a number >= 0";
    job.arrival_s = a.get<double>();
  }
  if (j.contains("workload")) {
    if (!j["workload"].is_string()) return ".workload: must be a string";
    job.workload = j["workload"].get<std::string>();
  }
  if (j.contains("gb")) {
    if (!j["gb"].is_number() || j["gb"].get<double>() < 0) return ".gb: must be a number >= 0";
    job.gb = j["gb"].get<double>();
  }
  return "";
}

}  // namespace

absl::StatusOr<std::vector<Job>> ParseJobList(const std::string &text, const std::string &source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception &e) {  // bad syntax, or a number no double holds (1e400)
    return absl::InvalidArgumentError(source + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object() || !doc.contains("jobs") || !doc["jobs"].is_array())
    return absl::InvalidArgumentError(source + ": jobs: must be an array of job objects");
  std::vector<Job> jobs;
  std::set<std::string> names;
  for (size_t i = 0; i < doc["jobs"].size(); ++i) {
    Job job;
    std::string error = ParseJob(doc["jobs"][i], job);
    if (error.empty() && !names.insert(job.name).second)
      error = ".name: duplicate name '" + job.name + "'";
    if (!error.empty())
      return absl::InvalidArgumentError(source + ": jobs[" + std::to_string(i) + "]" + error);
    jobs.push_back(std::move(job));
  }
  if (jobs.empty()) return absl::InvalidArgumentError(source + ": jobs: the list is empty");
  return jobs;
}

absl::StatusOr<std::vector<Job>> LoadJobList(const std::string &path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(path + ": cannot open the job list");
  std::stringstream text;
  text << in.rdbuf();
  return ParseJobList(text.str(), path);
}

std::string JobListToJson(const std::vector<Job> &jobs) {
  json list = json::array();
  for (const Job &job : jobs) {
    json j = {{"name", job.name},
              {"argv", job.argv},
              {"memory_bytes", job.memory_bytes},
              {"arrival_s", job.arrival_s}};
    if (job.host_memory_bytes > 0) j["host_memory_bytes"] = job.host_memory_bytes;
    if (!job.workload.empty()) j["workload"] = job.workload;
    if (job.gb > 0) j["gb"] = job.gb;
    list.push_back(j);
  }
  return json{{"jobs", list}}.dump(2) + "\n";
}

}  // namespace mgb::batch
