#include "job_of_process.h"

#include <charconv>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "absl/strings/str_split.h"
#include "process_tree.h"

namespace mgb::slurm {
namespace {

std::optional<uint64_t> Number(std::string_view text) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// "job_1234" -> 1234.
std::optional<uint64_t> JobFolder(std::string_view folder) {
  if (folder.rfind("job_", 0) != 0) return std::nullopt;
  return Number(folder.substr(4));
}

std::optional<std::string> ReadWhole(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Whether a process's real and effective uids are both root's, from its status file.
bool OwnedByRoot(const std::string &dir) {
  std::optional<std::string> status = ReadWhole(dir + "/status");
  if (!status) return false;
  std::istringstream lines(*status);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream uids(line.substr(4));
    int64_t real = -1, effective = -1;
    uids >> real >> effective;
    return real == 0 && effective == 0;
  }
  return false;
}

}  // namespace

std::optional<uint64_t> JobOfCgroupLine(std::string_view line) {
  // "ID:controllers:PATH"; PATH itself may not hold ':' in practice, but take all after the second.
  const size_t first = line.find(':');
  const size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  const std::string path(line.substr(second + 1));
  std::vector<std::string> parts = absl::StrSplit(path, '/');
  // parts[0] is empty (the path starts with '/').
  if (parts.size() >= 4 && parts[0].empty() &&
      (parts[1] == "slurm" || parts[1].rfind("slurm_", 0) == 0) && parts[2].rfind("uid_", 0) == 0) {
    return JobFolder(parts[3]);
  }
  if (parts.size() >= 4 && parts[0].empty() && parts[1] == "system.slice" &&
      (parts[2] == "slurmstepd.scope" ||
       (parts[2].rfind("slurmstepd-", 0) == 0 && parts[2].size() > 6 &&
        parts[2].substr(parts[2].size() - 6) == ".scope"))) {
    return JobFolder(parts[3]);
  }
  return std::nullopt;
}

std::optional<uint64_t> JobOfStepdTitle(std::string_view cmdline) {
  constexpr std::string_view kPrefix = "slurmstepd: [";
  if (cmdline.rfind(kPrefix, 0) != 0) return std::nullopt;
  std::string_view rest = cmdline.substr(kPrefix.size());
  const size_t end = rest.find_first_of(".]");
  if (end == std::string_view::npos) return std::nullopt;
  return Number(rest.substr(0, end));
}

std::optional<uint64_t> JobOfProcess(int64_t pid, const std::string &proc_root) {
  if (pid <= 0) return std::nullopt;
  if (std::optional<std::string> cgroups =
          ReadWhole(proc_root + "/" + std::to_string(pid) + "/cgroup")) {
    std::istringstream lines(*cgroups);
    for (std::string line; std::getline(lines, line);) {
      if (std::optional<uint64_t> job = JobOfCgroupLine(line)) return job;
    }
  }
  // No Slurm cgroup (proctrack/linuxproc, or a container without cgroup namespaces of its own):
  // the process tree. Only root can give a process a root-owned ancestor with slurmstepd's title.
  pid_t current = static_cast<pid_t>(pid);
  // Bounded walk: guards against a cycle seen through pids reused mid-walk.
  for (int depth = 0; depth < 64 && current > 1; ++depth) {
    batch::ProcStat stat;
    if (!batch::ReadProcStat(current, &stat, proc_root)) return std::nullopt;
    const std::string dir = proc_root + "/" + std::to_string(current);
    if (current != pid && OwnedByRoot(dir)) {
      if (std::optional<std::string> cmdline = ReadWhole(dir + "/cmdline")) {
        if (std::optional<uint64_t> job = JobOfStepdTitle(*cmdline)) return job;
      }
    }
    current = stat.ppid;
  }
  return std::nullopt;
}

}  // namespace mgb::slurm
