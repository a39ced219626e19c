#include "client_limits.h"

#include "absl/strings/str_cat.h"
#include "mgb/core/error_reason.h"

namespace mgb::server {
namespace {

absl::Status Exhausted(const std::string &user, size_t limit, const char *what) {
  return core::Refusal(core::ErrorReason::kUserLimit,
                       absl::StrCat("user ", user.empty() ? "(unknown)" : user, " has ", limit, " ",
                                    what, " at mgbd, the most one user may have"));
}

}  // namespace

std::string CappedText(const std::string &text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  // A UTF-8 continuation byte (10xxxxxx) is inside a character: cut before the character.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) --end;
  return text.substr(0, end);
}

size_t UserCounts::Count(const std::unordered_map<std::string, size_t> &counts,
                         const std::string &user) {
  const auto it = counts.find(user);
  return it == counts.end() ? 0 : it->second;
}

void UserCounts::Drop(std::unordered_map<std::string, size_t> &counts, const std::string &user) {
  const auto it = counts.find(user);
  if (it == counts.end()) return;
  if (--it->second == 0) counts.erase(it);  // a user who left costs nothing
}

absl::Status UserCounts::AdmitSession(const std::string &user) const {
  if (Count(sessions_, user) < limits_.sessions_per_user) return absl::OkStatus();
  return Exhausted(user, limits_.sessions_per_user, "sessions");
}

absl::Status UserCounts::AdmitTask(const std::string &user) const {
  if (Count(tasks_, user) < limits_.tasks_per_user) return absl::OkStatus();
  return Exhausted(user, limits_.tasks_per_user, "tasks (running and waiting)");
}

absl::Status UserCounts::AdmitWaiting(const std::string &user) const {
  if (Count(waiting_, user) < limits_.waiting_per_user) return absl::OkStatus();
  return Exhausted(user, limits_.waiting_per_user, "waiting tasks");
}

absl::Status UserCounts::AdmitWatcher(const std::string &user) const {
  if (all_watchers_ >= limits_.watchers) {
    return core::Refusal(core::ErrorReason::kUserLimit,
                         absl::StrCat("mgbd has ", limits_.watchers, " Watch streams, its most"));
  }
  if (Count(watchers_, user) < limits_.watchers_per_user) return absl::OkStatus();
  return Exhausted(user, limits_.watchers_per_user, "Watch streams");
}

void UserCounts::TaskAdded(core::TaskId task, const std::string &user, bool waiting) {
  owners_[task] = TaskOwner{user, waiting};
  ++tasks_[user];
  if (waiting) ++waiting_[user];
}

void UserCounts::TaskPlaced(core::TaskId task) {
  const auto it = owners_.find(task);
  if (it == owners_.end() || !it->second.waiting) return;
  it->second.waiting = false;
  Drop(waiting_, it->second.user);
}

void UserCounts::TaskGone(core::TaskId task) {
  const auto it = owners_.find(task);
  if (it == owners_.end()) return;
  if (it->second.waiting) Drop(waiting_, it->second.user);
  Drop(tasks_, it->second.user);
  owners_.erase(it);
}

void UserCounts::WatcherOpened(const std::string &user) {
  ++watchers_[user];
  ++all_watchers_;
}

void UserCounts::WatcherClosed(const std::string &user) {
  Drop(watchers_, user);
  if (all_watchers_ > 0) --all_watchers_;
}

}  // namespace mgb::server
