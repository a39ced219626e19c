#include "mgb/core/job_grants.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "mgb/core/byte_size.h"
#include "mgb/core/error_reason.h"

namespace mgb::core {

void JobGrants::Grant(JobId job, uint64_t bytes) { jobs_[job].limit = bytes; }

void JobGrants::End(JobId job) {
  jobs_.erase(job);
  std::erase_if(tasks_, [job](const auto &entry) { return entry.second.job == job; });
}

std::optional<uint64_t> JobGrants::Limit(JobId job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return std::nullopt;
  return it->second.limit;
}

uint64_t JobGrants::Held(JobId job) const {
  auto it = jobs_.find(job);
  return it == jobs_.end() ? 0 : it->second.held;
}

uint64_t JobGrants::Remaining(JobId job) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end() || it->second.held >= it->second.limit) return 0;
  return it->second.limit - it->second.held;
}

absl::Status JobGrants::Check(JobId job, uint64_t bytes, const std::string &what) const {
  auto it = jobs_.find(job);
  if (it == jobs_.end() || it->second.limit == 0) {
    return Refusal(
        ErrorReason::kNoJobGrant,
        absl::StrCat(
            what, ": Slurm job ", job,
            " has no GPU memory on this node (submit it with "
            "--gres=gpumem:SIZE; if it was, its Prolog could not reach mgbd: see slurmd's log)"));
  }
  const Job &j = it->second;
  if (bytes <= j.limit && j.held <= j.limit - bytes) return absl::OkStatus();
  return Refusal(
      ErrorReason::kJobGrantExceeded,
      absl::StrCat(what, " would take Slurm job ", job, " past its GPU memory grant of ",
                   FormatBytes(j.limit), " (--gres=gpumem): its tasks hold ", FormatBytes(j.held)));
}

void JobGrants::Charge(JobId job, uint64_t task, uint64_t bytes) {
  Charged &c = tasks_[task];
  c.job = job;
  c.bytes += bytes;
  if (auto it = jobs_.find(job); it != jobs_.end()) it->second.held += bytes;
}

void JobGrants::Refund(uint64_t task, uint64_t bytes) {
  auto it = tasks_.find(task);
  if (it == tasks_.end()) return;
  const uint64_t back = std::min(bytes, it->second.bytes);
  it->second.bytes -= back;
  if (auto job = jobs_.find(it->second.job); job != jobs_.end()) {
    job->second.held -= std::min(back, job->second.held);
  }
}

void JobGrants::Release(uint64_t task) {
  auto it = tasks_.find(task);
  if (it == tasks_.end()) return;
  Refund(task, it->second.bytes);
  tasks_.erase(it);
}

std::vector<std::pair<JobId, uint64_t>> JobGrants::Grants() const {
  std::vector<std::pair<JobId, uint64_t>> out;
  for (const auto &[job, j] : jobs_) out.emplace_back(job, j.limit);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace mgb::core
