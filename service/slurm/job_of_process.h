// Which Slurm job a process belongs to, from what the process cannot forge: the cgroup slurmd
// put it in, or else a root-owned `slurmstepd: [JOB.STEP]` among its ancestors (the process tree
// Slurm's proctrack/linuxproc follows). Never from the environment: SLURM_JOB_ID is the user's.
#ifndef MGB_SERVICE_SLURM_JOB_OF_PROCESS_H
#define MGB_SERVICE_SLURM_JOB_OF_PROCESS_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mgb::slurm {

// The job of process `pid`, read under `proc_root` (tests pass a fake /proc); empty when the
// process is outside Slurm (or gone).
std::optional<uint64_t> JobOfProcess(int64_t pid, const std::string &proc_root = "/proc");

// The job in one line of /proc/PID/cgroup ("ID:controllers:PATH"), when PATH is a cgroup only
// slurmd makes: /slurm[_NODE]/uid_U/job_J/... (cgroup v1) or
// /system.slice/slurmstepd.scope/job_J/... (v2; also under slurmstepd-NODE.scope). A job_J folder
// anywhere else (a user's own delegated subtree) does not count.
std::optional<uint64_t> JobOfCgroupLine(std::string_view line);

// The job in slurmstepd's process title ("slurmstepd: [1234.0]", "slurmstepd: [1234.batch]",
// "slurmstepd: [1234.extern]"); empty for anything else.
std::optional<uint64_t> JobOfStepdTitle(std::string_view cmdline);

}  // namespace mgb::slurm

#endif  // MGB_SERVICE_SLURM_JOB_OF_PROCESS_H
