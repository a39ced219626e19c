#include "run_guard.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "mgb/core/byte_size.h"
#include "mgb/core/error_reason.h"

namespace mgb::cli {
namespace {

constexpr const char *kLibrary = "libmgb-guard.so";

}  // namespace

std::optional<std::string> RunGuard::FindLibrary() {
  if (const char *named = std::getenv("MGB_GUARD_LIB"); named != nullptr && *named != '\0') {
    if (access(named, R_OK) == 0) return std::string(named);
    return std::nullopt;
  }
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return std::nullopt;
  const std::filesystem::path bin = self.parent_path();
  // bin/../lib (an install, or the GPU machine's .device/), lib/mgb, and the build tree's guard/.
  for (const std::filesystem::path &candidate :
       {bin / ".." / "lib" / kLibrary, bin / ".." / "lib" / "mgb" / kLibrary,
        bin / ".." / "guard" / kLibrary, bin / kLibrary}) {
    if (access(candidate.c_str(), R_OK) == 0) {
      return std::filesystem::weakly_canonical(candidate, error).string();
    }
  }
  return std::nullopt;
}

std::optional<std::string> RunGuard::Unloadable(const std::string &library) {
  // ld.so only warns about a preload it cannot load, and the program would run uncounted.
  void *handle = dlopen(library.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    const char *why = dlerror();
    return std::string(why != nullptr ? why : "dlopen failed");
  }
  dlclose(handle);
  return std::nullopt;
}

std::unique_ptr<RunGuard> RunGuard::Start(Client &client, std::vector<GpuTask> tasks, uint64_t cap,
                                          bool spill, const std::string &library,
                                          std::string *error) {
  // $TMPDIR, else (or when it cannot be written) /tmp, then /dev/shm.
  std::string dir;
  std::vector<std::string> tried;
  const char *tmp = std::getenv("TMPDIR");
  for (const std::string &base :
       {std::string(tmp != nullptr ? tmp : ""), std::string("/tmp"), std::string("/dev/shm")}) {
    if (base.empty()) continue;
    std::string pattern = base + "/mgb-run-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) {
      dir = pattern;
      break;
    }
    tried.push_back(pattern + " (" + std::strerror(errno) + ")");
  }
  if (dir.empty()) {
    *error = "cannot make a run directory: tried";
    for (const std::string &t : tried) *error += " " + t;
    return nullptr;
  }
  std::vector<uint64_t> reserved;
  for (const GpuTask &t : tasks) reserved.push_back(t.reserved);
  std::unique_ptr<RunGuard> guard(new RunGuard(client, std::move(tasks), dir, library, spill));
  guard->ledger_ = guard::RunLedger::Create(guard->dir_, reserved, cap, error);
  if (guard->ledger_ == nullptr) return nullptr;
  RunGuard *self = guard.get();
  guard->server_ = guard::GrowServer::Start(
      guard->dir_, [self](uint64_t missing, uint32_t gpu) { return self->Grow(missing, gpu); },
      error);
  if (guard->server_ == nullptr) return nullptr;
  if (geteuid() == 0) {
    // A program run by root may drop its privileges (a service, `su`, setpriv): the guard in it
    // must still reach the ledger and the channel. The directory's name is random and cannot be
    // listed; only a process of the program's new user could learn it, from the program itself.
    (void)chmod(guard->dir_.c_str(), 0711);
    (void)chmod((guard->dir_ + "/ledger").c_str(), 0666);
    (void)chmod((guard->dir_ + "/grow.sock").c_str(), 0666);
  }
  return guard;
}

RunGuard::~RunGuard() {
  server_.reset();  // no grow is answered after this
  ledger_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::vector<std::pair<std::string, std::string>> RunGuard::Environment() const {
  const char *preload = std::getenv("LD_PRELOAD");
  std::string value = library_;
  if (preload != nullptr && *preload != '\0') value += std::string(":") + preload;
  return {{"LD_PRELOAD", value}, {"MGB_GUARD_DIR", dir_}, {"MGB_GUARD_SPILL", spill_ ? "1" : "0"}};
}

RunGuard::Usage RunGuard::Read() {
  guard::LedgerCounters &c = ledger_->counters();
  // What the program's exited processes held is theirs no more (forked workers, pools).
  guard::ReapExited(c);
  Usage usage;
  usage.guarded = c.guarded.load() > 0;
  for (size_t g = 0; g < c.gpus; ++g) {
    usage.allocated.push_back(c.gpu[g].allocated.load());
    usage.peak.push_back(c.gpu[g].peak.load());
  }
  usage.refusals = c.refusals.load();
  usage.spilled = c.spilled.load();
  return usage;
}

void RunGuard::SetRoom(size_t gpu, uint64_t room_bytes) {
  if (gpu < tasks_.size()) ledger_->counters().gpu[gpu].room.store(room_bytes);
}

guard::GrowAnswer RunGuard::Grow(uint64_t missing_bytes, uint32_t gpu) {
  guard::LedgerCounters &c = ledger_->counters();
  guard::GrowAnswer answer;
  if (gpu >= tasks_.size()) {
    answer.verdict = guard::GrowAnswer::kRefused;
    answer.message = "CUDA device " + std::to_string(gpu) + " is not one of the run's";
    return answer;
  }
  const uint64_t cap = c.cap.load(), reserved = c.gpu[gpu].reserved.load();
  if (cap != 0 && reserved + missing_bytes > cap) {
    answer.verdict = guard::GrowAnswer::kRefused;
    answer.message = "the run would need " + core::FormatBytes(reserved + missing_bytes) +
                     ", past --max-mem " + core::FormatBytes(cap);
    return answer;
  }
  absl::StatusOr<uint64_t> grown = client_.TaskGrow(tasks_[gpu].task_id, missing_bytes);
  if (!grown.ok()) {
    const absl::StatusCode code = grown.status().code();
    answer.verdict =
        code == absl::StatusCode::kResourceExhausted || code == absl::StatusCode::kInvalidArgument
            ? guard::GrowAnswer::kRefused
            : guard::GrowAnswer::kUnavailable;
    // Not never, but not without waiting forever: others hold the room, all waiting to grow.
    if (core::ReasonOf(grown.status()) == core::ErrorReason::kNoRoom) {
      answer.verdict = guard::GrowAnswer::kNoRoom;
    }
    answer.message = "mgbd: " + std::string(grown.status().message());
    return answer;
  }
  guard::RaiseTo(c.gpu[gpu].reserved, *grown);
  answer.verdict = guard::GrowAnswer::kGranted;
  answer.reserved = c.gpu[gpu].reserved.load();
  return answer;
}

}  // namespace mgb::cli
