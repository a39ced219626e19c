// Placement by every policy, on config GPUs, through the core alone.
#include "core_test_support.h"
#include "mgb/core/error_reason.h"

namespace mgb::test {

TEST_CASE("mgb policy: among GPUs with enough memory, the fewest warps in use", "[core][policy]") {
  Core c(Gpus(2, 16 * kGB), "mgb");
  CHECK(c.BeginSolo(Request(1 * kGB, 100)).gpu == 0);  // tie at 0 warps: lowest index
  CHECK(c.BeginSolo(Request(1 * kGB, 10)).gpu == 1);   // 0 < 100
  CHECK(c.BeginSolo(Request(1 * kGB, 5)).gpu == 1);    // 10 < 100
  // GPU 1 has fewer warps (15) but not enough memory for 14 GB: memory is hard.
  CHECK(c.BeginSolo(Request(14 * kGB + kGB / 2, 1)).gpu == 0);
  CHECK(c.s->Status().gpus[0].warps_in_use == 101);
}

TEST_CASE("mgb policy: a grid wider than the GPU counts as the GPU's warp capacity",
          "[core][policy]") {
  Core c(Gpus(1, 16 * kGB, 2), "mgb");  // 2 SMs x 64 warps = 128
  const auto s = c.Open();
  c.Begin(s, Request(kGB, 100000));
  CHECK(c.s->Status().gpus[0].warps_in_use == 128);
}

TEST_CASE("huge grids saturate instead of wrapping", "[core][policy]") {
  // mgb: capped at 2 SMs x 64 warps; mgb-sm: one wave of 32 one-warp blocks per SM.
  for (auto [policy, warps] : {std::pair<const char *, uint64_t>{"mgb", 128}, {"mgb-sm", 64}}) {
    Core c(Gpus(1, 16 * kGB, 2), policy);
    core::TaskRequest r = Request(kGB);
    r.shape.grid = {0x7FFFFFFFu, 65535, 65535};  // CUDA's largest grid
    INFO(policy);
    CHECK(c.Begin(c.Open(), r).gpu == 0);
    CHECK(c.s->Status().gpus[0].warps_in_use == warps);  // the whole GPU, not a wrapped count
  }
}

TEST_CASE("a session's tasks go to a GPU where it has a context while one fits there",
          "[core][policy]") {
  // Found on 2 x H200: programs whose tasks share memory mgb cannot see (pointer arrays, structs of
  // pointers, library views) failed when the fewest-warps rule sent their second task to the other
  // GPU.
  for (const char *policy : {"mgb", "memory", "mgb-sm"}) {
    INFO(policy);
    Core c(Gpus(2, 16 * kGB), policy);
    const auto s = c.Open();
    const auto first = c.Begin(s, Request(10 * kGB, 1000));
    CHECK(first.gpu == 0);
    CHECK(c.Begin(s, Request(kGB, 1)).gpu ==
          0);  // not GPU 1, though it has fewer warps and more room
    if (std::string(policy) != "mgb-sm")
      CHECK(c.BeginSolo(Request(kGB, 1)).gpu == 1);  // others may
    // Only when none of its GPUs has room does a task go elsewhere: waiting for its own GPU could
    // deadlock a process whose other task holds that room.
    CHECK(c.Begin(s, Request(8 * kGB)).gpu == 1);
  }
}

TEST_CASE("a task goes only to GPUs its process can open (visible_pci_bus_ids)", "[core][policy]") {
  // Found on 2 x H100: a rewritten program under `mgb run` sees one GPU (CUDA_VISIBLE_DEVICES);
  // its task placed on the other one could not run.
  std::vector<core::GpuSpec> gpus = Gpus(3, 16 * kGB);
  gpus[0].pci_bus_id = "00000000:19:00.0";  // NVML's spelling; the request's is CUDA's
  gpus[1].pci_bus_id = "00000000:3B:00.0";
  gpus[2].memory_bytes = 64 * kGB;  // a config GPU without an id: never hidden
  for (const char *policy : {"mgb", "memory", "mgb-sm", "single", "cg:1"}) {
    INFO(policy);
    Core c(gpus, policy);
    core::TaskRequest sees_second = Request(kGB);
    sees_second.visible_pci_bus_ids = {"0000:3b:00.0"};
    const auto placed = c.BeginSolo(sees_second);
    CHECK((placed.gpu == 1 || placed.gpu == 2));               // GPU 0, the emptiest, is hidden
    if (std::string(policy) == "mgb") CHECK(placed.gpu == 1);  // fewest warps: 1 before 2
  }
  core::TaskRequest sees_first = Request(10 * kGB);
  sees_first.visible_pci_bus_ids = {"0000:19:00.0"};
  gpus.pop_back();
  gpus[1].memory_bytes = 32 * kGB;
  Core two(gpus, "mgb");
  CHECK(two.BeginSolo(sees_first).gpu == 0);
  // Waiting: GPU 0 is full, GPU 1 empty but hidden; the queue head reserves GPU 0 and gets it.
  const auto waiting = two.BeginSolo(sees_first);
  CHECK(waiting.gpu == -1);
  CHECK(two.BeginSolo(Request(kGB)).gpu == 1);  // others still use GPU 1
  // Never fits on what it can open (16 GB) though GPU 1 (32 GB) could hold it.
  core::TaskRequest big = Request(32 * kGB);
  big.visible_pci_bus_ids = {"0000:19:00.0"};
  auto refused = two.s->TaskBegin(two.Open(), big, 0);
  REQUIRE_FALSE(refused.ok());
  CHECK(core::ReasonOf(refused.status()) == core::ErrorReason::kNeverFits);
  CHECK(std::string(refused.status().message()).find("the process can open") != std::string::npos);
  core::TaskRequest nowhere = Request(kGB);
  nowhere.visible_pci_bus_ids = {"0000:99:00.0"};
  auto unknown = two.s->TaskBegin(two.Open(), nowhere, 0);
  REQUIRE_FALSE(unknown.ok());
  CHECK(core::ReasonOf(unknown.status()) == core::ErrorReason::kInvalidField);
  CHECK(std::string(unknown.status().message()).find("visible_pci_bus_ids") != std::string::npos);
}

TEST_CASE("memory policy: the GPU with the most available memory", "[core][policy]") {
  Core c(Gpus(3, 16 * kGB), "memory");
  CHECK(c.BeginSolo(Request(8 * kGB)).gpu == 0);
  CHECK(c.BeginSolo(Request(4 * kGB)).gpu == 1);
  CHECK(c.BeginSolo(Request(4 * kGB)).gpu == 2);
  CHECK(c.BeginSolo(Request(2 * kGB)).gpu == 1);    // 12 GB free on 1 and 2: first of them
  CHECK(c.BeginSolo(Request(13 * kGB)).gpu == -1);  // nowhere: waits
}

TEST_CASE("mgb-sm policy: per-SM blocks, warps, registers and shared memory are hard",
          "[core][policy]") {
  auto gpus = Gpus(2, 16 * kGB, 2);
  for (auto &g : gpus) g.sm = core::SmLimits{4, 8, 65536, 49152};  // 2 SMs each
  Core c(gpus, "mgb-sm");
  core::TaskRequest r = Request(kGB);
  r.shape.grid.x = 8;
  r.shape.block.x = 64;  // 2 warps a block: 4 blocks fill an SM's 8 warps
  const auto first = c.BeginSolo(r);
  CHECK(first.gpu == 0);  // Algorithm 2 takes the first GPU where every block fits
  CHECK(c.s->Status().gpus[0].warps_in_use == 16);
  r.shape.grid.x = 1;
  CHECK(c.BeginSolo(r).gpu == 1);  // GPU 0's SMs are full although its memory is not

  // Registers: 128/thread x 256 threads = 32768 per block, so 2 blocks per SM.
  core::TaskRequest regs = Request(kGB);
  regs.shape.grid.x = 4;
  regs.shape.block.x = 256;
  regs.shape.registers_per_thread = 128;
  auto gpus2 = Gpus(1, 16 * kGB, 2);
  for (auto &g : gpus2) g.sm = core::SmLimits{32, 64, 65536, 49152};
  Core d(gpus2, "mgb-sm");
  const auto s2 = d.Open();
  CHECK(d.Begin(s2, regs).gpu == 0);
  regs.shape.grid.x = 1;
  const auto blocked = d.Begin(s2, regs);
  CHECK(blocked.gpu == -1);  // registers exhausted on both SMs: compute is hard, it waits
  // Shared memory: 40 KiB blocks, 48 KiB per SM.
  core::TaskRequest shm = Request(kGB);
  shm.shape.shared_bytes_per_block = 40 * 1024;
  Core e(gpus2, "mgb-sm");
  const auto s3 = e.Open();
  shm.shape.grid.x = 2;
  CHECK(e.Begin(s3, shm).gpu == 0);
  shm.shape.grid.x = 1;
  CHECK(e.Begin(s3, shm).gpu == -1);
  // Releasing the first task frees its blocks: the waiting one is placed at once.
  REQUIRE(d.s->TaskEnd(s2, 1, 1).ok());
  CHECK(d.sink.PlacedOn(blocked.task) == 0);
}

TEST_CASE("single policy: a session owns one GPU from its first task to its end",
          "[core][policy]") {
  Core c(Gpus(2, 16 * kGB), "single");
  const auto a = c.Open(), b = c.Open(), third = c.Open();
  CHECK(c.Begin(a, Request(kGB)).gpu == 0);
  CHECK(c.Begin(b, Request(kGB)).gpu == 1);
  const auto waiting = c.Begin(third, Request(kGB));
  CHECK(waiting.gpu == -1);                  // memory is free, but no GPU is
  CHECK(c.Begin(a, Request(kGB)).gpu == 0);  // a's later tasks stay on its GPU
  REQUIRE(c.s->CloseSession(a, 1).ok());
  CHECK(c.sink.PlacedOn(waiting.task) == 0);
}

TEST_CASE("cg:N policy: N sessions per GPU, round robin, memory-blind", "[core][policy]") {
  Core c(Gpus(2, 16 * kGB), "cg:2");
  std::vector<int> gpus;
  for (int i = 0; i < 4; ++i) gpus.push_back(c.Begin(c.Open(), Request(15 * kGB)).gpu);
  CHECK(gpus == std::vector<int>{0, 1, 0, 1});  // 30 GB on each 16 GB GPU: unsafe by design
  CHECK(c.s->Status().gpus[0].memory_available == 0);
  CHECK(c.Begin(c.Open(), Request(kGB)).gpu == -1);  // a fifth session waits for a slot
}

TEST_CASE("policy names", "[core][policy]") {
  for (const char *name : {"mgb", "mgb-sm", "single", "memory", "cg:6"}) {
    auto p = core::ParsePolicy(name);
    REQUIRE(p.ok());
    CHECK(p->Name() == name);
  }
  for (const char *bad : {"", "cg", "cg:0", "cg:x", "cg:3x", "fastest"}) {
    auto p = core::ParsePolicy(bad);
    CHECK_FALSE(p.ok());
    CHECK(std::string(p.status().message()).find("policy") != std::string::npos);
  }
}

TEST_CASE("TaskLaunch: a task placed without a launch shape counts its first wider launch",
          "[core][policy]") {
  Core c(Gpus(2, 16 * kGB), "mgb");
  const auto early = c.BeginSolo(Request(kGB));  // placed before its first launch: 1 warp
  CHECK(early.gpu == 0);
  auto widened = c.s->TaskLaunch(early.session, early.task, Request(kGB, 100).shape);
  REQUIRE(widened.ok());
  CHECK(*widened == 100);
  CHECK(c.s->Status().gpus[0].warps_in_use == 100);
  // A narrower launch changes nothing: a task counts its widest.
  CHECK(*c.s->TaskLaunch(early.session, early.task, Request(kGB, 10).shape) == 100);
  CHECK(c.s->Status().gpus[0].warps_in_use == 100);
  // Fewest warps now sees it: the next task goes to GPU 1.
  CHECK(c.BeginSolo(Request(kGB, 5)).gpu == 1);
  // Only the owner, only a placed task.
  CHECK(c.s->TaskLaunch(c.Open(), early.task, Request(kGB, 200).shape).status().code() ==
        absl::StatusCode::kNotFound);
  REQUIRE(c.s->TaskEnd(early.session, early.task, 1).ok());
  CHECK(c.s->Status().gpus[0].warps_in_use == 0);  // the widened count is released with it
}

TEST_CASE("TaskLaunch under mgb-sm: fitted to the SMs' room, else counted and later tasks wait",
          "[core][policy]") {
  auto gpus = Gpus(1, 16 * kGB, 2);
  for (auto &g : gpus) g.sm = core::SmLimits{32, 8, 65536, 49152};  // 2 SMs x 8 warps
  Core c(gpus, "mgb-sm");
  const auto s = c.Open();
  const auto a = c.Begin(s, Request(kGB));
  REQUIRE(a.gpu == 0);
  CHECK(*c.s->TaskLaunch(s, a.task, Request(kGB, 6).shape) == 6);  // fits: 6 one-warp blocks
  CHECK(c.s->Status().gpus[0].warps_in_use == 6);
  const auto b = c.Begin(s, Request(kGB, 11));
  CHECK(b.gpu == -1);  // 6 + 11 > 16: compute is hard, it waits
  CHECK(c.s->TaskLaunch(s, b.task, Request(kGB, 1).shape).status().code() ==
        absl::StatusCode::kFailedPrecondition);  // not placed yet
  REQUIRE(c.s->TaskEnd(s, b.task, 1).ok());      // withdrawn
  const core::SessionId t = c.Open();
  const auto fill = c.Begin(t, Request(kGB, 10));
  REQUIRE(fill.gpu == 0);                                            // 6 + 10 = 16
  CHECK(*c.s->TaskLaunch(s, a.task, Request(kGB, 12).shape) == 12);  // past the room: counted
  CHECK(c.s->Status().gpus[0].warps_in_use == 22);
  CHECK(c.Begin(t, Request(kGB, 1)).gpu == -1);  // nothing fits beside an over-committed GPU
  REQUIRE(c.s->TaskEnd(s, a.task, 2).ok());
  CHECK(c.s->Status().gpus[0].warps_in_use == 11);  // `fill` and the waiting one-warp task
}

}  // namespace mgb::test
