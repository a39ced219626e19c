#include "unix_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace mgb::server {
namespace {

bool SomeoneListens(const std::string &path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  const bool connected = connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0;
  close(fd);
  return connected;
}

}  // namespace

absl::Status PrepareSocketPath(const std::string &path) {
  if (path.empty()) return absl::InvalidArgumentError("--socket: the path is empty");
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("--socket ", path, ": longer than the ",
                                                   sizeof(sockaddr_un{}.sun_path) - 1,
                                                   " bytes a Unix socket path may have"));
  }
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("--socket ", path, ": directory ", dir.string(), " does not exist"));
  }
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat("--socket ", path, ": ", std::strerror(errno)));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("--socket ", path, ": exists and is not a socket; refusing to replace it"));
  }
  if (SomeoneListens(path)) {
    return absl::FailedPreconditionError(
        absl::StrCat("--socket ", path, ": another mgbd is already listening there"));
  }
  if (unlink(path.c_str()) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--socket ", path, ": cannot remove the stale socket: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status RestrictSocketPermissions(const std::string &path) {
  if (chmod(path.c_str(), 0660) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--socket ", path, ": chmod 0660 failed: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace mgb::server
