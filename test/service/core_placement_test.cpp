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
  // One-warp blocks: the SM's 32 block slots fill at half its 64 warps, so each counts 2.
  CHECK(c.s->Status().gpus[0].warps_in_use == 202);
}

TEST_CASE("mgb policy: ties go to the GPU fewer processes have a context on, then fewer tasks",
          "[core][policy]") {
  // Measured on 2 x H100: every task of the paper's mix asked for a whole GPU, and ties between
  // idle GPUs all went to GPU 0; a process's later tasks follow its context, so 11 of 16
  // processes ran on GPU 0.
  Core c(Gpus(2, 16 * kGB), "mgb");
  const core::SessionId first = c.Open();
  const core::TaskId t1 = c.Begin(first, Request(kGB, 100)).task;
  REQUIRE(c.s->TaskEnd(first, t1, 0).ok());  // GPU 0 idle again, the context stays
  const auto second = c.BeginSolo(Request(kGB, 100));
  CHECK(second.gpu == 1);  // 0 warps on both: GPU 1 has no context yet
  REQUIRE(c.s->TaskEnd(second.session, second.task, 0).ok());
  REQUIRE(c.s->CloseSession(first, 0).ok());
  REQUIRE(c.s->CloseSession(second.session, 0).ok());
  // Equal warps and contexts: fewer tasks wins. GPU 0: one process, two one-warp tasks (2 warps
  // each); GPU 1: one process, one task of two one-warp blocks (4 warps).
  const core::SessionId two_tasks = c.Open();
  CHECK(c.Begin(two_tasks, Request(kGB, 1)).gpu == 0);
  CHECK(c.Begin(two_tasks, Request(kGB, 1)).gpu == 0);  // follows its context
  CHECK(c.BeginSolo(Request(kGB, 2)).gpu == 1);
  REQUIRE(c.s->Status().gpus[0].warps_in_use == c.s->Status().gpus[1].warps_in_use);
  CHECK(c.BeginSolo(Request(kGB, 1)).gpu == 1);
}

TEST_CASE("a launch's demand counts the SMs its registers and shared memory fill",
          "[core][policy]") {
  Core c(Gpus(1, 16 * kGB, 2), "mgb");  // 2 SMs x 64 warps, 65,536 registers each
  core::TaskRequest r = Request(kGB);
  r.shape.grid.x = 2;
  r.shape.block.x = 256;               // 8 warps a block: 16 warps of 128 by warps alone
  r.shape.registers_per_thread = 255;  // 65,280 registers a block: one block fills an SM
  c.Begin(c.Open(), r);
  CHECK(c.s->Status().gpus[0].warps_in_use == 128);  // both SMs full
  core::TaskRequest shared = Request(kGB);
  shared.shape.grid.x = 1;
  shared.shape.block.x = 64;
  shared.shape.shared_bytes_per_block = 100 * 1024;  // two fit an SM's 228 KiB, not three
  Core d(Gpus(1, 16 * kGB, 2), "mgb");
  d.Begin(d.Open(), shared);
  CHECK(d.s->Status().gpus[0].warps_in_use == 32);  // half of one SM of two
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

TEST_CASE("schedgpu policy: every job on the first GPU while it fits", "[core][policy]") {
  Core c(Gpus(3, 16 * kGB), "schedgpu");
  CHECK(c.BeginSolo(Request(8 * kGB)).gpu == 0);
  CHECK(c.BeginSolo(Request(4 * kGB)).gpu == 0);  // GPUs 1 and 2 idle: still GPU 0
  CHECK(c.BeginSolo(Request(6 * kGB)).gpu == 1);  // 4 GB left on GPU 0: the next that fits
  CHECK(c.BeginSolo(Request(2 * kGB)).gpu == 0);  // fits on GPU 0 again
  CHECK(c.BeginSolo(Request(13 * kGB)).gpu == 2);
  CHECK(c.BeginSolo(Request(11 * kGB)).gpu == -1);  // nowhere: waits
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
  for (const char *name : {"mgb", "mgb-sm", "single", "memory", "schedgpu", "cg:6"}) {
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
  CHECK(*widened == 200);  // one-warp blocks count 2 (the SM's block slots)
  CHECK(c.s->Status().gpus[0].warps_in_use == 200);
  // A narrower launch changes nothing: a task counts its widest.
  CHECK(*c.s->TaskLaunch(early.session, early.task, Request(kGB, 10).shape) == 200);
  CHECK(c.s->Status().gpus[0].warps_in_use == 200);
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

namespace mgb::test {
namespace {

// `blocks` blocks of 8 warps: on a 2-SM test GPU (64 warps an SM) 8 blocks fill one SM, so the
// demand is 8 warps a block, 128 for the whole GPU.
core::TaskRequest Blocks(uint64_t bytes, uint32_t blocks) {
  core::TaskRequest r = Request(bytes);
  r.shape.grid.x = blocks;
  r.shape.block.x = 256;
  return r;
}

core::Options Bounded(uint32_t percent) {
  core::Options options{*Core::ParsedPolicy("mgb"), 0};
  options.max_slowdown_percent = percent;
  return options;
}

}  // namespace

TEST_CASE("the slowdown bound: a busy GPU takes a task only while the demand stays in the bound",
          "[core][policy][slowdown]") {
  Core c(Gpus(2, 16 * kGB, 2), Bounded(5));  // limit: 128 + 6 warps
  const auto a = c.BeginSolo(Blocks(kGB, 16));
  const auto b = c.BeginSolo(Blocks(kGB, 16));
  CHECK(a.gpu == 0);
  CHECK(b.gpu == 1);
  const auto full = c.BeginSolo(Blocks(kGB, 16));
  CHECK(full.gpu == -1);                             // 256 warps on either: waits
  CHECK(c.BeginSolo(Blocks(kGB, 1)).gpu == -1);      // 136 > 134: waits too
  REQUIRE(c.s->TaskEnd(a.session, a.task, 0).ok());  // GPU 0 idle: the head goes there
  CHECK(c.sink.PlacedOn(full.task) == 0);
  // Without the bound the same task shares a GPU at once.
  Core free(Gpus(2, 16 * kGB, 2), "mgb");
  free.BeginSolo(Blocks(kGB, 16));
  free.BeginSolo(Blocks(kGB, 16));
  CHECK(free.BeginSolo(Blocks(kGB, 16)).gpu == 0);
}

TEST_CASE("the slowdown bound: tasks behind a waiting head leave it its demand",
          "[core][policy][slowdown]") {
  Core c(Gpus(1, 16 * kGB, 2), Bounded(5));
  const auto half = c.BeginSolo(Blocks(kGB, 8));   // 64 warps
  const auto head = c.BeginSolo(Blocks(kGB, 16));  // 192 > 134: waits
  REQUIRE(head.gpu == -1);
  // 64 + 64 fits the GPU now, but once `half` ends the head would find it 192: it waits.
  const auto younger = c.BeginSolo(Blocks(kGB, 8));
  CHECK(younger.gpu == -1);
  REQUIRE(c.s->TaskEnd(half.session, half.task, 0).ok());
  CHECK(c.sink.PlacedOn(head.task) == 0);
  CHECK(c.sink.PlacedOn(younger.task) == -1);  // 128 + 64 > 134
  // A large bound lets the two halves share.
  Core loose(Gpus(1, 16 * kGB, 2), Bounded(100));
  loose.BeginSolo(Blocks(kGB, 8));
  CHECK(loose.BeginSolo(Blocks(kGB, 16)).gpu == 0);  // 192 <= 256
}

}  // namespace mgb::test

namespace mgb::test {

TEST_CASE("a task without a shape takes the one its site's earlier task launched",
          "[core][policy][sites]") {
  // Found on 2 x H100: 13 of W1's 16 tasks were placed before their first launch and counted 2
  // warps each, so neither the fewest-warps rule nor --max-slowdown could weigh them.
  Core c(Gpus(2, 16 * kGB, 2), "mgb");
  core::TaskRequest shapeless = Request(kGB);
  shapeless.shape = {};  // one thread: nothing known
  shapeless.label = "train.cu:40";
  shapeless.owner = "alice";
  const auto first = c.BeginSolo(shapeless);
  REQUIRE(c.s->TaskLaunch(first.session, first.task, Blocks(kGB, 16).shape).ok());
  REQUIRE(c.s->TaskEnd(first.session, first.task, 0).ok());
  const auto second = c.BeginSolo(shapeless);
  CHECK(c.s->Status().gpus[second.gpu].warps_in_use == 128);  // the learned whole GPU
  // Another site, another user, or a task with a shape of its own: nothing borrowed.
  core::TaskRequest other = shapeless;
  other.label = "train.cu:41";
  const auto third = c.BeginSolo(other);
  CHECK(c.s->Status().gpus[third.gpu].warps_in_use == 2);
  core::TaskRequest bob = shapeless;
  bob.owner = "bob";
  const auto fourth = c.BeginSolo(bob);
  CHECK(c.s->Status().gpus[fourth.gpu].warps_in_use == 4);  // with `third`'s 2 on that GPU
}

TEST_CASE("site shapes keep the most demanding launch and forget the oldest site past capacity",
          "[core][sites]") {
  core::SiteShapes sites(2);
  core::LaunchShape wide, narrow;
  wide.grid.x = 100;
  narrow.grid.x = 10;
  sites.Learn("a", narrow, 10);
  sites.Learn("a", wide, 100);
  sites.Learn("a", narrow, 10);  // less demanding: kept wide
  REQUIRE(sites.Lookup("a"));
  CHECK(sites.Lookup("a")->grid.x == 100);
  sites.Learn("b", narrow, 10);
  sites.Learn("c", narrow, 10);  // past 2: "a", learned longest ago, goes
  CHECK_FALSE(sites.Lookup("a"));
  CHECK(sites.Lookup("b"));
  CHECK(sites.size() == 2);
  sites.Learn("", wide, 100);  // no site: nothing
  CHECK(sites.size() == 2);
  CHECK(core::SiteShapes::Unknown(core::LaunchShape{}));
  CHECK_FALSE(core::SiteShapes::Unknown(wide));
}

}  // namespace mgb::test
