// Which job a process belongs to: the job's own process or a descendant of it (jobs may be
// `mgb run` wrappers around the CUDA program), from the parent links in /proc/<pid>/stat.
#ifndef MGB_TOOLS_PROCESS_PROCESS_TREE_H
#define MGB_TOOLS_PROCESS_PROCESS_TREE_H

#include <sys/types.h>

#include <set>
#include <string>

namespace mgb::batch {

struct ProcStat {
  std::string comm;  // the command name, e.g. "nvidia-cuda-mps-server"
  pid_t ppid = 0;
  pid_t pgrp = 0;
};

// Reads PROC_ROOT/<pid>/stat (tests pass a fake /proc); false when the process is gone or the file
// is unreadable.
bool ReadProcStat(pid_t pid, ProcStat *out, const std::string &proc_root = "/proc");

// The member of `roots` that is `pid` or one of its ancestors; failing that, the one that leads
// pid's process group (the runner starts each job in its own group, which survives a wrapper
// dying and its child being reparented to init). 0 when none.
pid_t OwningRoot(pid_t pid, const std::set<pid_t> &roots);

}  // namespace mgb::batch

#endif  // MGB_TOOLS_PROCESS_PROCESS_TREE_H
