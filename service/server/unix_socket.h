// mgbd's Unix socket: clear errors for unusable paths, stale sockets replaced, created safely.
#ifndef MGB_SERVICE_SERVER_UNIX_SOCKET_H
#define MGB_SERVICE_SERVER_UNIX_SOCKET_H

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mgb::server {

// OK when mgbd may bind `path`: its directory exists, and the path is free or a stale socket
// (removed here; *stale is set then). FAILED_PRECONDITION when another mgbd answers there or the
// path is not a socket.
absl::Status PrepareSocketPath(const std::string &path, bool *stale = nullptr);

// Creates, binds and listens on `path` (after PrepareSocketPath) and returns the descriptor.
// The file is born 0660 (owner and group may connect) through the umask: nothing is ever
// chmodded by path, which another user could have swapped for a symlink. A directory every user
// may write without the sticky bit is refused: anyone could replace the socket there.
// *stale: a previous mgbd's socket was there (it died, or stopped with sessions open).
absl::StatusOr<int> BindUnixSocket(const std::string &path, bool *stale = nullptr);

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_UNIX_SOCKET_H
