#include "atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace mgb::server {

absl::Status ReplaceFileAtomically(const std::string &path, const std::string &text) {
  // The pid keeps two mgbds given the same file from writing one temporary file.
  const std::string temporary = absl::StrCat(path, ".tmp.", getpid());
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot write ", temporary, ": ", std::strerror(errno)));
  }
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  const int write_errno = errno;
  const bool synced = written == text.size() && fsync(fd) == 0;
  close(fd);
  if (!synced || rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = written < text.size() ? write_errno : errno;
    unlink(temporary.c_str());
    return absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
  }
  return absl::OkStatus();
}

}  // namespace mgb::server
