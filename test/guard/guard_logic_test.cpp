// The guard's accounting (guard/src) against a fake driver table: what is counted, un-counted,
// grown, refused, and what cuMemGetInfo reports. No processes, no driver.
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <map>
#include <new>
#include <thread>
#include <vector>

#include "guard_budget.h"
#include "guarded_driver.h"

namespace mgb::guard {
namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

// A device of 64 MiB in host bookkeeping, reached through plain functions as the driver's are.
struct FakeDevice {
  static inline std::map<CUdeviceptr, size_t> live;
  static inline CUdeviceptr next = 0x1000;
  static inline size_t total = 64 * kMiB;
  static size_t Used() {
    size_t used = 0;
    for (auto &[address, bytes] : live) used += bytes;
    return used;
  }
  static CUresult Alloc(CUdeviceptr *p, size_t bytes) {
    if (Used() + bytes > total) return kCudaErrorOutOfMemory;
    *p = next;
    next += bytes;
    live[*p] = bytes;
    return kCudaSuccess;
  }
  static CUresult Free(CUdeviceptr p) { return live.erase(p) == 1 ? kCudaSuccess : 1; }
  static CUresult Pitch(CUdeviceptr *p, size_t *pitch, size_t width, size_t height, unsigned) {
    *pitch = (width + 127) / 128 * 128;  // finer than the guard's 512-byte bound
    return Alloc(p, *pitch * height);
  }
  // Host memory made for the device (a spill): handles, and the addresses mapped to them.
  static inline std::map<CUmemGenericAllocationHandle, size_t> host;
  static inline std::map<CUdeviceptr, CUmemGenericAllocationHandle> mapped;
  static inline CUdeviceptr next_reserved = 0x7000'0000'0000;
  static CUresult Create(CUmemGenericAllocationHandle *h, size_t bytes, const void *prop,
                         unsigned long long) {
    const auto *p = static_cast<const MemAllocationProp *>(prop);
    if (p == nullptr || p->location.type == kMemLocationDevice) return Alloc(h, bytes);
    *h = next++;
    host[*h] = bytes;
    return kCudaSuccess;
  }
  static CUresult Release(CUmemGenericAllocationHandle h) {
    return host.erase(h) == 1 ? kCudaSuccess : Free(h);
  }
  static CUresult Reserve(CUdeviceptr *p, size_t bytes, size_t, CUdeviceptr, unsigned long long) {
    *p = next_reserved;
    next_reserved += bytes;
    return kCudaSuccess;
  }
  static CUresult AddressFree(CUdeviceptr, size_t) { return kCudaSuccess; }
  static CUresult Map(CUdeviceptr p, size_t, size_t, CUmemGenericAllocationHandle h,
                      unsigned long long) {
    mapped[p] = h;
    return kCudaSuccess;
  }
  static CUresult Unmap(CUdeviceptr p, size_t) { return mapped.erase(p) == 1 ? kCudaSuccess : 1; }
  static CUresult SetAccess(CUdeviceptr, size_t, const MemAccessDesc *desc, size_t count) {
    return count == 1 && desc->location.type == kMemLocationDevice ? kCudaSuccess : 1;
  }
  static CUresult Device(CUdevice *d) {
    *d = 0;
    return kCudaSuccess;
  }
  static CUresult Info(size_t *free, size_t *all) {
    *all = total;
    *free = total - Used();
    return kCudaSuccess;
  }
  static RealDriver Table() {
    live.clear();
    RealDriver real;
    real.mem_alloc = Alloc;
    real.mem_free = Free;
    real.mem_alloc_pitch = Pitch;
    real.mem_create = Create;
    real.mem_release = Release;
    real.mem_get_info = Info;
    host.clear();
    mapped.clear();
    real.mem_address_reserve = Reserve;
    real.mem_address_free = AddressFree;
    real.mem_map = Map;
    real.mem_unmap = Unmap;
    real.mem_set_access = SetAccess;
    real.ctx_get_device = Device;
    return real;
  }
};

// A run whose `mgb run` grants grows up to `limit` (then refuses), recording each request; as
// `mgb run` does, it raises the ledger's reservation before answering.
struct FakeRun {
  // In memory shared with forked children, as the ledger file is with a run's processes.
  LedgerCounters &counters = *new (mmap(nullptr, sizeof(LedgerCounters), PROT_READ | PROT_WRITE,
                                        MAP_SHARED | MAP_ANONYMOUS, -1, 0)) LedgerCounters;
  ~FakeRun() { munmap(&counters, sizeof(LedgerCounters)); }
  uint64_t limit = 0;
  GrowAnswer::Verdict past_limit = GrowAnswer::kRefused;
  std::vector<uint64_t> asked;
  GuardBudget::Ask Asker() {
    return [this](uint64_t missing, uint32_t) {
      asked.push_back(missing);
      GrowAnswer answer;
      if (counters.gpu[0].reserved + missing > limit) {
        answer.verdict = past_limit;
        answer.message = "past the limit";
        return answer;
      }
      counters.gpu[0].reserved += missing;
      answer.verdict = GrowAnswer::kGranted;
      answer.reserved = counters.gpu[0].reserved;
      return answer;
    };
  }
};

}  // namespace

TEST_CASE("allocations within the reservation are counted without asking; past it, grown first",
          "[guard]") {
  FakeRun run;
  run.counters.gpu[0].reserved = 8 * kMiB;
  run.limit = 32 * kMiB;
  GuardBudget budget(run.counters, run.Asker(), false);
  GuardedDriver driver(FakeDevice::Table(), &budget);
  CUdeviceptr a = 0, b = 0, c = 0;
  REQUIRE(driver.MemAlloc(&a, 6 * kMiB) == kCudaSuccess);
  CHECK(run.asked.empty());
  CHECK(run.counters.gpu[0].allocated == 6 * kMiB);
  REQUIRE(driver.MemAlloc(&b, 10 * kMiB) == kCudaSuccess);
  REQUIRE(run.asked.size() == 1);
  CHECK(run.asked[0] == 8 * kMiB);  // 16 MiB wanted, 8 reserved
  CHECK(run.counters.gpu[0].reserved == 16 * kMiB);
  // Past the limit: out-of-memory for this allocation only, nothing counted, the driver untouched.
  CHECK(driver.MemAlloc(&c, 20 * kMiB) == kCudaErrorOutOfMemory);
  CHECK(FakeDevice::live.size() == 2);
  CHECK(run.counters.gpu[0].allocated == 16 * kMiB);
  CHECK(run.counters.refusals == 1);
  // Frees un-count; the peak stays.
  REQUIRE(driver.MemFree(b) == kCudaSuccess);
  CHECK(run.counters.gpu[0].allocated == 6 * kMiB);
  CHECK(run.counters.gpu[0].peak == 16 * kMiB);
  // A free the guard did not count (made before it was active) changes nothing.
  CUdeviceptr early = 0;
  REQUIRE(FakeDevice::Alloc(&early, kMiB) == kCudaSuccess);
  CHECK(driver.MemFree(early) == kCudaSuccess);
  CHECK(run.counters.gpu[0].allocated == 6 * kMiB);
}

// Issue 32, item 8: memory of exited processes was never counted out. 20 processes in turn
// holding 2 GiB each pushed a run's grant to 16 GiB and the 9th got out-of-memory.
TEST_CASE("what an exited process held is counted out, killed or not", "[guard][hostile]") {
  FakeRun run;
  run.limit = 16 * kGiB;
  const auto in_child = [&](const std::function<bool()> &work) {
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) _exit(work() ? 0 : 1);  // exits holding what it allocated
    return child;
  };
  const auto succeeded = [](pid_t child) {
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  };
  SECTION("20 processes in turn, 2 GiB each") {
    int ok = 0;
    for (int i = 0; i < 20; ++i) {
      ok += succeeded(in_child([&] {
        GuardBudget budget(run.counters, run.Asker(), false);
        std::string why;
        return budget.Admit(2 * kGiB, 0, &why) == GuardBudget::Admission::kAdmitted;
      }));
    }
    CHECK(ok == 20);
    CHECK(run.counters.gpu[0].reserved <= 4 * kGiB);  // the FakeRun's grants live in shared memory
  }
  SECTION("50 processes at once, 256 MiB each, then killed") {
    std::vector<pid_t> children;
    for (int i = 0; i < 50; ++i) {
      children.push_back(in_child([&] {
        GuardBudget budget(run.counters, run.Asker(), false);
        std::string why;
        if (budget.Admit(256 * kMiB, 0, &why) != GuardBudget::Admission::kAdmitted) return false;
        pause();
        return true;
      }));
    }
    for (int waited = 0; run.counters.gpu[0].allocated < 50 * 256 * kMiB && waited < 500;
         ++waited) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(run.counters.gpu[0].allocated == 50 * 256 * kMiB);
    for (pid_t child : children) kill(child, SIGKILL);
    for (pid_t child : children) waitpid(child, nullptr, 0);
    CHECK(ReapExited(run.counters) == 50 * 256 * kMiB);
    CHECK(run.counters.gpu[0].allocated == 0);
  }
  // This process's own bytes are never counted out while it lives.
  GuardBudget budget(run.counters, run.Asker(), false);
  std::string why;
  REQUIRE(budget.Admit(kGiB, 0, &why) == GuardBudget::Admission::kAdmitted);
  CHECK(ReapExited(run.counters) == 0);
  CHECK(run.counters.gpu[0].allocated == kGiB);
}

TEST_CASE("a failed driver allocation is un-counted; pitch counts the real rows; VMM by handle",
          "[guard]") {
  FakeRun run;
  run.counters.gpu[0].reserved = 1024 * kMiB;
  run.limit = 1024 * kMiB;
  GuardBudget budget(run.counters, run.Asker(), false);
  GuardedDriver driver(FakeDevice::Table(), &budget);
  CUdeviceptr p = 0;
  CHECK(driver.MemAlloc(&p, 100 * kMiB) == kCudaErrorOutOfMemory);  // the 64 MiB device says no
  CHECK(run.counters.gpu[0].allocated == 0);
  size_t pitch = 0;
  REQUIRE(driver.MemAllocPitch(&p, &pitch, 1000, 1024, 4) == kCudaSuccess);
  CHECK(pitch == 1024);
  CHECK(run.counters.gpu[0].allocated == 1024 * 1024);
  REQUIRE(driver.MemFree(p) == kCudaSuccess);
  CHECK(run.counters.gpu[0].allocated == 0);
  CUmemGenericAllocationHandle handle = 0;
  REQUIRE(driver.MemCreate(&handle, 2 * kMiB, nullptr, 0) == kCudaSuccess);
  CHECK(run.counters.gpu[0].allocated == 2 * kMiB);
  REQUIRE(driver.MemRelease(handle) == kCudaSuccess);
  CHECK(run.counters.gpu[0].allocated == 0);
}

TEST_CASE("cuMemGetInfo reports what is left under --max-mem, the driver's figures without one",
          "[guard]") {
  FakeRun run;
  run.counters.gpu[0].reserved = 8 * kMiB;
  run.limit = 1024 * kMiB;
  GuardBudget budget(run.counters, run.Asker(), false);
  GuardedDriver driver(FakeDevice::Table(), &budget);
  CUdeviceptr p = 0;
  REQUIRE(driver.MemAlloc(&p, 4 * kMiB) == kCudaSuccess);
  size_t free = 0, total = 0;
  REQUIRE(driver.MemGetInfo(&free, &total) == kCudaSuccess);
  CHECK(total == 64 * kMiB);
  CHECK(free == 60 * kMiB);
  run.counters.cap = 16 * kMiB;
  REQUIRE(driver.MemGetInfo(&free, &total) == kCudaSuccess);
  CHECK(total == 16 * kMiB);
  CHECK(free == 12 * kMiB);
}

// Found on 2 x H100: a learned peak of 3 GiB made the first grant larger than --max-mem 1G, and a
// 2 GiB cudaMalloc fitted in the grant, so the cap was never asked about.
TEST_CASE("the guard refuses past --max-mem even inside a larger grant", "[guard]") {
  FakeRun run;
  run.counters.gpu[0].reserved = 48 * kMiB;
  run.counters.cap = 16 * kMiB;
  GuardBudget budget(run.counters, run.Asker(), false);
  GuardedDriver driver(FakeDevice::Table(), &budget);
  CUdeviceptr p = 0, q = 0;
  REQUIRE(driver.MemAlloc(&p, 12 * kMiB) == kCudaSuccess);
  CHECK(driver.MemAlloc(&q, 8 * kMiB) == kCudaErrorOutOfMemory);
  CHECK(run.counters.gpu[0].allocated == 12 * kMiB);
  CHECK(run.counters.refusals == 1);
  CHECK(driver.MemAlloc(&q, 4 * kMiB) == kCudaSuccess);  // up to the cap itself
  CHECK(run.asked.empty());
}

TEST_CASE("cuMemGetInfo's free is at most the room mgbd says the run has", "[guard]") {
  FakeRun run;
  run.counters.gpu[0].reserved = 8 * kMiB;
  run.limit = 1024 * kMiB;
  GuardBudget budget(run.counters, run.Asker(), false);
  GuardedDriver driver(FakeDevice::Table(), &budget);
  CUdeviceptr p = 0;
  REQUIRE(driver.MemAlloc(&p, 4 * kMiB) == kCudaSuccess);
  run.counters.gpu[0].room = 20 * kMiB;  // others reserved the rest of the 64 MiB GPU
  size_t free = 0, total = 0;
  REQUIRE(driver.MemGetInfo(&free, &total) == kCudaSuccess);
  CHECK(total == 64 * kMiB);
  CHECK(free == 16 * kMiB);
  run.counters.cap = 10 * kMiB;  // --max-mem lower still
  REQUIRE(driver.MemGetInfo(&free, &total) == kCudaSuccess);
  CHECK(total == 10 * kMiB);
  CHECK(free == 6 * kMiB);
}

// Issue 33: two programs growing side by side on one GPU, the younger's grow hopeless: it died of
// out-of-memory. With spill it gets host memory mapped for the device, and runs on.
TEST_CASE("a grow mgbd cannot grant without waiting forever is served from host memory",
          "[guard][spill]") {
  FakeRun run;
  run.counters.gpu[0].reserved = 8 * kMiB;
  run.limit = 8 * kMiB;
  run.past_limit = GrowAnswer::kNoRoom;
  CUdeviceptr p = 0;
  {
    GuardBudget budget(run.counters, run.Asker(), false, /*spill_allowed=*/false);
    GuardedDriver driver(FakeDevice::Table(), &budget);
    CHECK(driver.MemAlloc(&p, 16 * kMiB) == kCudaErrorOutOfMemory);
    CHECK(run.counters.refusals == 1);
  }
  GuardBudget budget(run.counters, run.Asker(), false, /*spill_allowed=*/true);
  GuardedDriver driver(FakeDevice::Table(), &budget);
  CUdeviceptr on_device = 0;
  REQUIRE(driver.MemAlloc(&on_device, 4 * kMiB) == kCudaSuccess);  // within the grant
  REQUIRE(driver.MemAlloc(&p, 15 * kMiB) == kCudaSuccess);
  CHECK(FakeDevice::Used() == 4 * kMiB);  // not on the device
  CHECK(FakeDevice::host.size() == 1);
  CHECK(FakeDevice::host.begin()->second == 16 * kMiB);  // in 2 MiB pieces
  CHECK(FakeDevice::mapped.count(p) == 1);               // at the address the program got
  CHECK(run.counters.spilled == 15 * kMiB);
  CHECK(run.counters.gpu[0].allocated == 4 * kMiB);  // the grant counts device memory only
  CHECK(run.counters.refusals == 1);                 // the earlier one only
  REQUIRE(driver.MemFree(p) == kCudaSuccess);
  CHECK(FakeDevice::host.empty());
  CHECK(FakeDevice::mapped.empty());
  CHECK(run.counters.spilled == 0);
  // cuMemCreate (PyTorch's expandable segments): a host handle, released as the program would.
  MemAllocationProp device_prop;
  device_prop.location = {kMemLocationDevice, 0};
  CUmemGenericAllocationHandle handle = 0;
  REQUIRE(driver.MemCreate(&handle, 8 * kMiB, &device_prop, 0) == kCudaSuccess);
  CHECK(FakeDevice::host.count(handle) == 1);
  CHECK(run.counters.spilled == 8 * kMiB);
  REQUIRE(driver.MemRelease(handle) == kCudaSuccess);
  CHECK(run.counters.spilled == 0);
  // No spill for stream-ordered allocations: out-of-memory, as before.
  CHECK(driver.MemAllocAsync(&p, 16 * kMiB, nullptr, false) == kCudaErrorOutOfMemory);
  REQUIRE(driver.MemFree(on_device) == kCudaSuccess);
}

TEST_CASE("when mgb run cannot be asked: out-of-memory, or unguarded with MGB_UNMANAGED",
          "[guard]") {
  FakeRun run;
  run.counters.gpu[0].reserved = kMiB;
  run.past_limit = GrowAnswer::kUnavailable;
  CUdeviceptr p = 0;
  {
    GuardBudget budget(run.counters, run.Asker(), /*unmanaged_allowed=*/false);
    GuardedDriver driver(FakeDevice::Table(), &budget);
    CHECK(driver.MemAlloc(&p, 2 * kMiB) == kCudaErrorOutOfMemory);
    CHECK(driver.Active());
  }
  GuardBudget budget(run.counters, run.Asker(), /*unmanaged_allowed=*/true);
  GuardedDriver driver(FakeDevice::Table(), &budget);
  CHECK(driver.MemAlloc(&p, 2 * kMiB) == kCudaSuccess);
  CHECK_FALSE(driver.Active());
  CHECK(driver.MemAlloc(&p, 2 * kMiB) == kCudaSuccess);  // no second question
  CHECK(run.asked.size() == 2);
}

TEST_CASE("a guard that stood down (libmgb manages the program) counts nothing more", "[guard]") {
  FakeRun run;
  run.counters.gpu[0].reserved = 8 * kMiB;
  run.counters.cap = 8 * kMiB;
  GuardBudget budget(run.counters, run.Asker(), false);
  GuardedDriver driver(FakeDevice::Table(), &budget);
  CUdeviceptr counted = 0, p = 0;
  REQUIRE(driver.MemAlloc(&counted, 4 * kMiB) == kCudaSuccess);
  driver.Disable();
  CHECK(driver.MemAlloc(&p, 16 * kMiB) == kCudaSuccess);  // past the cap: no longer the guard's
  CHECK(run.counters.gpu[0].allocated == 4 * kMiB);
  size_t free = 0, total = 0;
  REQUIRE(driver.MemGetInfo(&free, &total) == kCudaSuccess);
  CHECK(total == 64 * kMiB);
  REQUIRE(driver.MemFree(counted) == kCudaSuccess);  // what it counted before is still un-counted
  CHECK(run.counters.gpu[0].allocated == 0);
  CHECK(run.asked.empty());
}

TEST_CASE("a driver function this driver lacks is answered CUDA_ERROR_NOT_FOUND, nothing counted",
          "[guard]") {
  FakeRun run;
  run.counters.gpu[0].reserved = 8 * kMiB;
  GuardBudget budget(run.counters, run.Asker(), false);
  GuardedDriver driver(FakeDevice::Table(), &budget);  // no async or pool functions
  CUdeviceptr p = 0;
  CHECK(driver.MemAllocAsync(&p, kMiB, nullptr, false) == kCudaErrorNotFound);
  CHECK(driver.MemFreeAsync(p, nullptr, true) == kCudaErrorNotFound);
  CHECK(run.counters.gpu[0].allocated == 0);
}

TEST_CASE("without a run the guard only forwards", "[guard]") {
  GuardedDriver driver(FakeDevice::Table(), nullptr);
  CUdeviceptr p = 0;
  CHECK(driver.MemAlloc(&p, 8 * kMiB) == kCudaSuccess);
  CHECK_FALSE(driver.Active());
  size_t free = 0, total = 0;
  REQUIRE(driver.MemGetInfo(&free, &total) == kCudaSuccess);
  CHECK(free == 56 * kMiB);
}

}  // namespace mgb::guard
