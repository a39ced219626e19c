// mgb::core::JobGrants: each batch job's GPU memory grant on this node (a Slurm job's
// --gres=gpumem), and what its tasks reserve against it. Plain C++, no locking: mgbd keeps it
// beside its Scheduler, under the same mutex (docs/slurm.md, "Held to the grant").
//
// The rule: a task of a job may reserve memory (begin, or grow) only while the job's tasks
// together stay within its grant; past it the call fails at once with an error naming the job and
// its grant, as Slurm's own --mem limit does for host memory (a job that waited for its own
// memory could wait for itself). A job mgbd has no grant for reserves nothing. Sessions that
// belong to no job are not limited here.
#ifndef MGB_CORE_JOB_GRANTS_H
#define MGB_CORE_JOB_GRANTS_H

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"

namespace mgb::core {

using JobId = uint64_t;  // the batch system's job id; 0 = no job

class JobGrants {
 public:
  // Sets (or replaces) the job's grant.
  void Grant(JobId job, uint64_t bytes);
  // Forgets the job and its charges (its tasks end with it).
  void End(JobId job);

  std::optional<uint64_t> Limit(JobId job) const;
  uint64_t Held(JobId job) const;
  // What the job may still reserve: its grant less what its tasks hold (0 without a grant).
  uint64_t Remaining(JobId job) const;
  // OK when `bytes` more stay within the job's grant; else RESOURCE_EXHAUSTED naming the job,
  // its grant and what its tasks hold. `what` says what asked, e.g. "a task of 4.00 GiB".
  absl::Status Check(JobId job, uint64_t bytes, const std::string &what) const;

  // A task of `job` reserved `bytes` more (it began, or asked to grow).
  void Charge(JobId job, uint64_t task, uint64_t bytes);
  // A grow of the task that was charged failed or was withdrawn.
  void Refund(uint64_t task, uint64_t bytes);
  // The task ended or gave up waiting: everything it was charged comes back.
  void Release(uint64_t task);

  std::vector<std::pair<JobId, uint64_t>> Grants() const;  // by job id

 private:
  struct Job {
    uint64_t limit = 0;
    uint64_t held = 0;
  };
  struct Charged {
    JobId job = 0;
    uint64_t bytes = 0;
  };
  std::unordered_map<JobId, Job> jobs_;
  std::unordered_map<uint64_t, Charged> tasks_;
};

}  // namespace mgb::core

#endif  // MGB_CORE_JOB_GRANTS_H
