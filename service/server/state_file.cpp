#include "state_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"

namespace mgb::server {
namespace {

constexpr mode_t kWritableByOthers = S_IWGRP | S_IWOTH;

// Why the open file `fd` (at `path`) is not a state file to trust; empty when it is.
std::string DistrustOfFile(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (st.st_uid != geteuid()) return absl::StrCat("owned by uid ", st.st_uid, ", not mgbd's");
  if ((st.st_mode & kWritableByOthers) != 0) return "writable by other users";
  return "";
}

// Opens `path` without following a symlink or blocking on a FIFO, and checks what it is.
absl::StatusOr<int> OpenTrusted(const std::string &path, int flags) {
  const int fd = open(path.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT && (flags & O_CREAT) == 0)
      return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    if (error == ELOOP) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, ": a symbolic link; mgbd does not follow one to a state file"));
    }
    if (error == ENXIO) {  // a FIFO without a reader, opened to write
      return absl::FailedPreconditionError(absl::StrCat(path, ": not a regular file"));
    }
    return absl::UnavailableError(absl::StrCat("cannot open ", path, ": ", std::strerror(error)));
  }
  if (const std::string why = DistrustOfFile(fd); !why.empty()) {
    close(fd);
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": ", why, "; mgbd will not use it as a state file"));
  }
  const int status_flags = fcntl(fd, F_GETFL);
  if (status_flags >= 0) fcntl(fd, F_SETFL, status_flags & ~O_NONBLOCK);
  return fd;
}

absl::Status WriteAll(int fd, const std::string &text, const std::string &path) {
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::UnavailableError(
          absl::StrCat("cannot write ", path, ": ", n < 0 ? std::strerror(errno) : "short write"));
    }
    written += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// Why directory `path` is not one to keep state in; empty when it is.
std::string DistrustOfDirectory(const std::string &path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "not a directory";
  if (st.st_uid != geteuid() && st.st_uid != 0) return absl::StrCat("owned by uid ", st.st_uid);
  if ((st.st_mode & kWritableByOthers) != 0) return "writable by other users";
  return "";
}

// Creates `path` and its missing parents (mode 0700), then checks the last one.
std::string EnsurePrivateDirectory(const std::string &path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::StrCat("cannot create ", prefix, ": ", std::strerror(errno));
    }
    if (slash == std::string::npos) break;
  }
  const std::string why = DistrustOfDirectory(path);
  return why.empty() ? "" : absl::StrCat(path, ": ", why);
}

}  // namespace

absl::StatusOr<std::string> ReadStateFile(const std::string &path) {
  absl::StatusOr<int> fd = OpenTrusted(path, O_RDONLY);
  if (!fd.ok()) return fd.status();
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(*fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(*fd);
      return absl::UnavailableError(absl::StrCat(path, ": ", std::strerror(error)));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  close(*fd);
  return text;
}

absl::Status ReplaceStateFile(const std::string &path, const std::string &text) {
  // An unpredictable name, created exclusively: nothing planted in advance is opened.
  std::random_device entropy;
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    temporary = absl::StrCat(path, ".tmp.", getpid(), ".", entropy());
    fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot write ", temporary, ": ", std::strerror(errno)));
  }
  absl::Status written = WriteAll(fd, text, temporary);
  if (written.ok() && fsync(fd) != 0) {
    written =
        absl::UnavailableError(absl::StrCat("cannot sync ", temporary, ": ", std::strerror(errno)));
  }
  close(fd);
  if (written.ok() && rename(temporary.c_str(), path.c_str()) != 0) {
    written =
        absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  if (!written.ok()) unlink(temporary.c_str());
  return written;
}

absl::Status AppendStateFile(const std::string &path, const std::string &text) {
  absl::StatusOr<int> fd = OpenTrusted(path, O_WRONLY | O_APPEND | O_CREAT);
  if (!fd.ok()) return fd.status();
  absl::Status written = WriteAll(*fd, text, path);
  close(*fd);
  return written;
}

std::string UserStateDirectory() {
  if (geteuid() == 0) return "/var/lib/mgbd";
  if (const char *state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state == '/') {
    return absl::StrCat(state, "/mgbd");
  }
  if (const char *home = std::getenv("HOME"); home != nullptr && *home == '/') {
    return absl::StrCat(home, "/.local/state/mgbd");
  }
  return "";
}

std::string DefaultStateDirectory(const std::string &socket_path, const std::string &own,
                                  std::string *why) {
  const size_t slash = socket_path.rfind('/');
  const std::string beside = slash == std::string::npos ? "." : socket_path.substr(0, slash);
  const std::string distrust = DistrustOfDirectory(beside.empty() ? "/" : beside);
  if (distrust.empty()) return slash == std::string::npos ? "" : beside + "/";
  const std::string problem =
      absl::StrCat("the socket's directory ", beside.empty() ? "/" : beside, " is ", distrust);
  if (own.empty()) {
    *why = problem + ", and there is no HOME for a private one";
    return "";
  }
  if (const std::string failed = EnsurePrivateDirectory(own); !failed.empty()) {
    *why = absl::StrCat(problem, ", and ", failed);
    return "";
  }
  *why = absl::StrCat(problem, ": state files go to ", own, "/");
  return own + "/";
}

}  // namespace mgb::server
