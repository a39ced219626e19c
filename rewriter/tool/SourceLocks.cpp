#include "SourceLocks.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace mgb::rewriter {

llvm::Expected<SourceLocks> SourceLocks::acquire(std::vector<std::string> paths) {
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  SourceLocks locks;
  for (const std::string &path : paths) {
    for (;;) {
      const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        return llvm::createStringError(std::error_code(errno, std::generic_category()),
                                       "%s: cannot open to lock it: %s", path.c_str(),
                                       std::strerror(errno));
      while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
      }
      struct stat held {
      }, now{};
      if (fstat(fd, &held) == 0 && stat(path.c_str(), &now) == 0 && held.st_ino == now.st_ino &&
          held.st_dev == now.st_dev) {
        locks.fds_.push_back(fd);
        break;
      }
      close(fd); // replaced while we waited: lock the file that is there now
    }
  }
  return locks;
}

SourceLocks::~SourceLocks() {
  for (int fd : fds_)
    close(fd); // releases the lock
}

} // namespace mgb::rewriter
