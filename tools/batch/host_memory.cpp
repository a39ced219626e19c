#include "host_memory.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "process_tree.h"

namespace mgb::batch {

HostMemoryVerdict DecideHostMemory(uint64_t available, uint64_t reserve, uint64_t expected_peak,
                                   const std::vector<RunningHostMemory> &running) {
  HostMemoryVerdict v;
  v.available = available;
  for (const RunningHostMemory &r : running)
    if (r.expected_peak > r.resident) v.pending += r.expected_peak - r.resident;
  v.needed = expected_peak + reserve;
  v.admit = running.empty() || (available >= v.pending && available - v.pending >= v.needed);
  return v;
}

std::optional<uint64_t> ReadMeminfoField(const std::string &meminfo_path,
                                         const std::string &field) {
  std::ifstream in(meminfo_path);
  std::string line;
  while (std::getline(in, line)) {
    // "MemAvailable:   123456 kB"
    if (line.compare(0, field.size() + 1, field + ":") != 0) continue;
    std::istringstream rest(line.substr(field.size() + 1));
    uint64_t value = 0;
    std::string unit;
    if (!(rest >> value)) return std::nullopt;
    rest >> unit;
    return unit == "kB" ? value * 1024 : value;
  }
  return std::nullopt;
}

uint64_t ResidentBytes(pid_t pid, const std::string &proc_root) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/statm");
  uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

std::map<pid_t, uint64_t> GroupResidentBytes(const std::set<pid_t> &groups,
                                             const std::string &proc_root) {
  std::map<pid_t, uint64_t> resident;
  if (groups.empty()) return resident;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(proc_root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    ProcStat stat;
    if (!ReadProcStat(pid, &stat, proc_root) || !groups.count(stat.pgrp)) continue;
    resident[stat.pgrp] += ResidentBytes(pid, proc_root);
  }
  return resident;
}

HostMemoryGate::HostMemoryGate(uint64_t reserve, std::string meminfo_path, std::string proc_root)
    : reserve_(reserve), meminfo_path_(std::move(meminfo_path)), proc_root_(std::move(proc_root)) {}

HostMemoryVerdict HostMemoryGate::Admits(
    uint64_t expected_peak, const std::vector<std::pair<pid_t, uint64_t>> &running) const {
  std::optional<uint64_t> available = ReadMeminfoField(meminfo_path_, "MemAvailable");
  if (!available) return HostMemoryVerdict{};
  std::set<pid_t> groups;
  for (const auto &[group, peak] : running) groups.insert(group);
  const std::map<pid_t, uint64_t> resident = GroupResidentBytes(groups, proc_root_);
  std::vector<RunningHostMemory> seen;
  for (const auto &[group, peak] : running) {
    auto it = resident.find(group);
    seen.push_back({peak, it == resident.end() ? 0 : it->second});
  }
  return DecideHostMemory(*available, reserve_, expected_peak, seen);
}

uint64_t DefaultHostReserve(uint64_t mem_total) {
  return std::max<uint64_t>(uint64_t{1} << 30, mem_total / 20);
}

}  // namespace mgb::batch
