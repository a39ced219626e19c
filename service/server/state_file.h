// mgbd's state files (learned peaks, Slurm job grants), read and written so that no other local
// user can use them against mgbd: a FIFO planted at a state file's name would block mgbd for
// ever, a symlink would redirect root's writes, and a planted file would feed mgbd a stranger's
// numbers. So a state file is trusted only when it is a regular file owned by mgbd's user that
// no one else may write; new files are created under unpredictable names (O_EXCL, mode 0600);
// and state goes by default only into a directory no one else may write (docs/service.md,
// "State files").
#ifndef MGB_SERVICE_SERVER_STATE_FILE_H
#define MGB_SERVICE_SERVER_STATE_FILE_H

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mgb::server {

// The whole file. NOT_FOUND when there is none; FAILED_PRECONDITION naming the file and why when
// it is not one to trust (a symlink, not a regular file, another user's, writable by others);
// UNAVAILABLE with the system's reason otherwise.
absl::StatusOr<std::string> ReadStateFile(const std::string &path);

// Replaces the file whole: `text` goes to a new file beside it under a random name, is synced,
// and is renamed over it (a reader, or a crash, sees the old file or the new one). The old file
// is left as it was on failure.
absl::Status ReplaceStateFile(const std::string &path, const std::string &text);

// Appends `text` to the file (created, mode 0600, when missing), with ReadStateFile's checks.
absl::Status AppendStateFile(const std::string &path, const std::string &text);

// A private directory of mgbd's user for state: root's /var/lib/mgbd; for others
// $XDG_STATE_HOME/mgbd, else $HOME/.local/state/mgbd; empty when there is no HOME.
std::string UserStateDirectory();

// The directory state files go into unless a flag names them: the socket's own directory when
// only mgbd's user (or root) may write it; otherwise `own` (UserStateDirectory()), created mode
// 0700 when missing and trusted only as the socket's directory would be. Ends in '/' ("" for
// the working directory of a relative socket). Empty, with `*why` saying why, when there is
// none to trust; otherwise `*why` says where state went when not beside the socket.
std::string DefaultStateDirectory(const std::string &socket_path, const std::string &own,
                                  std::string *why);

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_STATE_FILE_H
