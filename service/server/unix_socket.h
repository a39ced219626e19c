// Preparing mgbd's Unix socket path: clear errors for unusable paths, stale sockets replaced.
#ifndef MGB_SERVICE_SERVER_UNIX_SOCKET_H
#define MGB_SERVICE_SERVER_UNIX_SOCKET_H

#include <string>

#include "absl/status/status.h"

namespace mgb::server {

// OK when mgbd may bind `path`: its directory exists, and the path is free or a stale socket
// (removed here). FAILED_PRECONDITION when another mgbd answers there or the path is not a socket.
absl::Status PrepareSocketPath(const std::string &path);

// Owner and group may connect, nobody else (0660).
absl::Status RestrictSocketPermissions(const std::string &path);

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_UNIX_SOCKET_H
