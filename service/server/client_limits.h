// What one local user may hold in mgbd, so that no user can starve or blind the others
// (issue 32, item 5): sessions, tasks (running and waiting), waiting tasks and Watch streams per
// user; the length of the texts a client names things by; and how many tasks Status lists.
// UserCounts keeps the counts; the SchedulerService consults it under its mutex.
#ifndef MGB_SERVICE_SERVER_CLIENT_LIMITS_H
#define MGB_SERVICE_SERVER_CLIENT_LIMITS_H

#include <cstddef>
#include <string>
#include <unordered_map>

#include "absl/status/status.h"
#include "mgb/core/scheduler.h"

namespace mgb::server {

struct ClientLimits {
  size_t sessions_per_user = 1024;
  size_t tasks_per_user = 16384;  // running and waiting
  size_t waiting_per_user = 4096;
  size_t watchers_per_user = 16;
  size_t watchers = 256;  // Watch streams of all users together
  // Longer texts are cut (at a UTF-8 character's start): they name things, nothing depends on
  // their end. A profile key (a command line) keeps more.
  size_t label_bytes = 256;
  size_t program_bytes = 256;
  size_t profile_key_bytes = 4096;
  // Status lists at most this many running and this many waiting tasks; it counts the rest.
  size_t status_tasks = 2000;
};

// `text` cut to at most `max_bytes`, never inside a UTF-8 character.
std::string CappedText(const std::string &text, size_t max_bytes);

class UserCounts {
 public:
  explicit UserCounts(const ClientLimits &limits) : limits_(limits) {}

  // OK, or RESOURCE_EXHAUSTED naming the limit.
  absl::Status AdmitSession(const std::string &user) const;
  absl::Status AdmitTask(const std::string &user) const;
  absl::Status AdmitWaiting(const std::string &user) const;  // one more of the user's would wait
  absl::Status AdmitWatcher(const std::string &user) const;

  void SessionOpened(const std::string &user) { ++sessions_[user]; }
  void SessionClosed(const std::string &user) { Drop(sessions_, user); }
  void TaskAdded(core::TaskId task, const std::string &user, bool waiting);
  void TaskPlaced(core::TaskId task);  // it waited and now runs
  void TaskGone(core::TaskId task);    // ended, or gave up waiting
  void WatcherOpened(const std::string &user);
  void WatcherClosed(const std::string &user);

 private:
  struct TaskOwner {
    std::string user;
    bool waiting = false;
  };
  static size_t Count(const std::unordered_map<std::string, size_t> &counts,
                      const std::string &user);
  static void Drop(std::unordered_map<std::string, size_t> &counts, const std::string &user);

  const ClientLimits limits_;
  std::unordered_map<std::string, size_t> sessions_, tasks_, waiting_, watchers_;
  size_t all_watchers_ = 0;
  std::unordered_map<core::TaskId, TaskOwner> owners_;
};

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_CLIENT_LIMITS_H
