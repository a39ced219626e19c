#include "run_ledger.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
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

std::unique_ptr<RunLedger> RunLedger::Create(const std::string &dir,
                                             const std::vector<uint64_t> &reserved, uint64_t cap,
                                             std::string *error) {
  const std::string path = LedgerPath(dir);
  if (reserved.empty() || reserved.size() > kMaxRunGpus) {
    *error = "a run has 1 to " + std::to_string(kMaxRunGpus) + " GPUs";
    return nullptr;
  }
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
  counters->gpus = reserved.size();
  for (size_t g = 0; g < reserved.size(); ++g) counters->gpu[g].reserved = reserved[g];
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
  if (counters->magic != LedgerCounters::kMagic || counters->gpus < 1 ||
      counters->gpus > kMaxRunGpus) {
    munmap(counters, sizeof(LedgerCounters));
    *error = path + " is not an mgb run ledger (bad magic)";
    return nullptr;
  }
  return std::unique_ptr<RunLedger>(new RunLedger(counters));
}

RunLedger::~RunLedger() { munmap(counters_, sizeof(LedgerCounters)); }

uint64_t ProcessStartTime(int64_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%lld/stat", static_cast<long long>(pid));
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[1024];
  const ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  // "pid (comm) state ..." and comm may hold spaces or parentheses: fields count from the last ')'.
  const char *field = std::strrchr(text, ')');
  if (field == nullptr) return 0;
  char state = 0;
  unsigned long long start = 0;
  // state is field 3, starttime field 22.
  if (std::sscanf(
          field + 1,
          " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
          &state, &start) != 2) {
    return 0;
  }
  return state == 'Z' || state == 'X' ? 0 : static_cast<uint64_t>(start);
}

ProcessSlot *ClaimSlot(LedgerCounters &counters) {
  const uint64_t pid = static_cast<uint64_t>(getpid());
  const uint64_t start = ProcessStartTime(getpid());
  for (ProcessSlot &slot : counters.slots) {
    uint64_t free = 0;
    if (slot.pid.load(std::memory_order_relaxed) == 0 &&
        slot.pid.compare_exchange_strong(free, pid)) {
      for (auto &bytes : slot.allocated) bytes.store(0);
      slot.start.store(start, std::memory_order_release);
      return &slot;
    }
  }
  return nullptr;
}

void SubtractFrom(std::atomic<uint64_t> &counter, uint64_t bytes) {
  uint64_t seen = counter.load(std::memory_order_relaxed);
  while (!counter.compare_exchange_weak(seen, seen > bytes ? seen - bytes : 0,
                                        std::memory_order_relaxed)) {
  }
}

uint64_t ReapExited(LedgerCounters &counters) {
  uint64_t reaped = 0;
  for (ProcessSlot &slot : counters.slots) {
    const uint64_t pid = slot.pid.load(std::memory_order_acquire);
    const uint64_t start = slot.start.load(std::memory_order_acquire);
    if (pid == 0 || start == 0) continue;                                // free, or being claimed
    if (ProcessStartTime(static_cast<int64_t>(pid)) == start) continue;  // alive
    // Taken by this reaper alone; the process is gone, so its count no longer moves.
    uint64_t expected = pid;
    if (!slot.pid.compare_exchange_strong(expected, 0)) continue;
    for (size_t g = 0; g < kMaxRunGpus; ++g) {
      const uint64_t bytes = slot.allocated[g].exchange(0);
      SubtractFrom(counters.gpu[g].allocated, bytes);
      reaped += bytes;
    }
    slot.start.store(0);
  }
  if (reaped > 0) counters.reaped.fetch_add(reaped, std::memory_order_relaxed);
  return reaped;
}

}  // namespace mgb::guard
