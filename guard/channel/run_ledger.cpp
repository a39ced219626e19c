#include "run_ledger.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

namespace mgb::guard {
namespace {

std::string LedgerPath(const std::string &dir) { return dir + "/ledger"; }

std::string ErrnoText(const std::string &what, const std::string &path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Maps the file and closes its descriptor; null on failure.
void *Map(int fd, const std::string &path, std::string *error) {
  void *memory = mmap(nullptr, sizeof(LedgerCounters), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (memory == MAP_FAILED) *error = ErrnoText("cannot map", path);
  close(fd);
  return memory == MAP_FAILED ? nullptr : memory;
}

}  // namespace

std::unique_ptr<RunLedger> RunLedger::Create(const std::string &dir, uint64_t reserved,
                                             uint64_t cap, std::string *error) {
  const std::string path = LedgerPath(dir);
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    *error = ErrnoText("cannot create", path);
    return nullptr;
  }
  if (ftruncate(fd, sizeof(LedgerCounters)) != 0) {
    *error = ErrnoText("cannot size", path);
    close(fd);
    return nullptr;
  }
  void *memory = Map(fd, path, error);
  if (memory == nullptr) return nullptr;
  auto *counters = new (memory) LedgerCounters;
  counters->reserved = reserved;
  counters->cap = cap;
  std::atomic_thread_fence(std::memory_order_release);
  counters->magic = LedgerCounters::kMagic;
  return std::unique_ptr<RunLedger>(new RunLedger(counters));
}

std::unique_ptr<RunLedger> RunLedger::Open(const std::string &dir, std::string *error) {
  const std::string path = LedgerPath(dir);
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    *error = ErrnoText("cannot open", path);
    return nullptr;
  }
  struct stat info;
  if (fstat(fd, &info) != 0 || static_cast<size_t>(info.st_size) < sizeof(LedgerCounters)) {
    close(fd);
    *error = path + " is not an mgb run ledger (too small)";
    return nullptr;
  }
  void *memory = Map(fd, path, error);
  if (memory == nullptr) return nullptr;
  auto *counters = static_cast<LedgerCounters *>(memory);
  if (counters->magic != LedgerCounters::kMagic) {
    munmap(counters, sizeof(LedgerCounters));
    *error = path + " is not an mgb run ledger (bad magic)";
    return nullptr;
  }
  return std::unique_ptr<RunLedger>(new RunLedger(counters));
}

RunLedger::~RunLedger() { munmap(counters_, sizeof(LedgerCounters)); }

}  // namespace mgb::guard
