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

absl::Status PrepareSocketPath(const std::string &path, bool *stale) {
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
    return absl::FailedPreconditionError(
        absl::StrCat("--socket ", path, ": ", std::strerror(errno)));
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
    return absl::FailedPreconditionError(absl::StrCat(
        "--socket ", path, ": cannot remove the stale socket: ", std::strerror(errno)));
  }
  if (stale != nullptr) *stale = true;
  return absl::OkStatus();
}

absl::StatusOr<int> BindUnixSocket(const std::string &path, bool *stale) {
  if (absl::Status st = PrepareSocketPath(path, stale); !st.ok()) return st;
  const std::filesystem::path p(path);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  struct stat dir_stat {};
  if (stat(dir.c_str(), &dir_stat) == 0 && (dir_stat.st_mode & S_IWOTH) != 0 &&
      (dir_stat.st_mode & S_ISVTX) == 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--socket ", path, ": directory ", dir,
        " may be written by every user and has no sticky bit, so anyone could replace the socket; "
        "use a directory only mgbd's user may write (e.g. /run/mgbd)"));
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket(): ", std::strerror(errno)));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  const mode_t old_mask = umask(0117);
  const int bound = bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr);
  const int bind_error = errno;
  umask(old_mask);
  if (bound != 0 || listen(fd, SOMAXCONN) != 0) {
    const int error = bound != 0 ? bind_error : errno;
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat("--socket ", path, ": cannot listen there: ", std::strerror(error)));
  }
  return fd;
}

}  // namespace mgb::server
