#include "process_tree.h"

#include <fstream>
#include <sstream>

namespace mgb::batch {

bool ReadProcStat(pid_t pid, ProcStat *out, const std::string &proc_root) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so split at the last
  // ')'.
  const size_t open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  std::istringstream rest(line.substr(close + 1));
  char state = 0;
  ProcStat stat;
  stat.comm = line.substr(open + 1, close - open - 1);
  if (!(rest >> state >> stat.ppid >> stat.pgrp)) return false;
  *out = std::move(stat);
  return true;
}

pid_t OwningRoot(pid_t pid, const std::set<pid_t> &roots) {
  pid_t group = 0;
  // Bounded walk: guards against a cycle seen through pids reused mid-walk.
  for (int depth = 0; depth < 64 && pid > 1; ++depth) {
    if (roots.count(pid)) return pid;
    ProcStat stat;
    if (!ReadProcStat(pid, &stat)) break;
    if (depth == 0) group = stat.pgrp;
    pid = stat.ppid;
  }
  return roots.count(group) ? group : 0;
}

}  // namespace mgb::batch
