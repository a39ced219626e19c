// Bad input to the core: an error naming the field, and no change of state.
#include "core_test_support.h"

namespace mgb::test {
namespace {

// The parts of a snapshot a bad call must not change.
std::string Fingerprint(const core::Scheduler &s) {
  const core::Snapshot snap = s.Status();
  std::string f = std::to_string(snap.running.size()) + "/" + std::to_string(snap.waiting.size()) +
                  "/" + std::to_string(snap.sessions) + "/" + std::to_string(snap.decisions);
  for (const auto &g : snap.gpus) {
    f += "|" + std::to_string(g.memory_reserved) + "," + std::to_string(g.warps_in_use) + "," +
         std::to_string(g.tasks) + "," + std::to_string(g.sessions);
  }
  return f;
}

void CheckRejected(const absl::Status &st, absl::StatusCode code, const std::string &field) {
  CHECK(st.code() == code);
  CHECK_THAT(std::string(st.message()), Catch::Contains(field));
}

}  // namespace

TEST_CASE("bad requests are refused naming the field, state unchanged", "[core][input]") {
  Core c(Gpus(2, 16 * kGB), "mgb", kGB);
  const auto s = c.Open(), other = c.Open();
  const auto held = c.Begin(s, Request(2 * kGB));
  const std::string before = Fingerprint(*c.s);

  for (auto [field, member] :
       std::initializer_list<std::pair<const char *, uint32_t core::Dim3::*>>{
           {"x", &core::Dim3::x}, {"y", &core::Dim3::y}, {"z", &core::Dim3::z}}) {
    core::TaskRequest r = Request(kGB);
    r.shape.grid.*member = 0;
    CheckRejected(c.s->TaskBegin(s, r, 1).status(), absl::StatusCode::kInvalidArgument,
                  std::string("shape.grid.") + field + " must be > 0");
    r = Request(kGB);
    r.shape.block.*member = 0;
    CheckRejected(c.s->TaskBegin(s, r, 1).status(), absl::StatusCode::kInvalidArgument,
                  std::string("shape.block.") + field + " must be > 0");
  }
  core::TaskRequest wide = Request(kGB);
  wide.shape.block.x = 2048;
  CheckRejected(c.s->TaskBegin(s, wide, 1).status(), absl::StatusCode::kInvalidArgument,
                "shape.block");
  // CUDA's per-axis limits, under every policy (they were left to mgb-sm's per-SM fit).
  for (auto [axis, limit, bad] :
       std::initializer_list<std::tuple<const char *, uint32_t, core::Dim3>>{
           {"shape.block.z is 128; CUDA allows at most 64", 64, {1, 1, 128}},
           {"shape.grid.y is 65536; CUDA allows at most 65535", 65535, {1, 65536, 1}},
           {"shape.grid.z is 70000; CUDA allows at most 65535", 65535, {1, 1, 70000}}}) {
    core::TaskRequest r = Request(kGB);
    if (std::string(axis).starts_with("shape.block"))
      r.shape.block = bad;
    else
      r.shape.grid = bad;
    CheckRejected(c.s->TaskBegin(s, r, 1).status(), absl::StatusCode::kInvalidArgument, axis);
    (void)limit;
  }
  CheckRejected(c.s->TaskBegin(s, Request(17 * kGB), 1).status(),
                absl::StatusCode::kInvalidArgument, "memory_bytes");
  // 16 GB fits the capacity but never with the 1 GB context reserve: refused now, not queued.
  CheckRejected(c.s->TaskBegin(s, Request(16 * kGB), 1).status(),
                absl::StatusCode::kInvalidArgument, "memory_bytes");
  CheckRejected(c.s->TaskBegin(999, Request(kGB), 1).status(), absl::StatusCode::kNotFound,
                "session_id");
  CheckRejected(c.s->TaskEnd(s, 12345, 1), absl::StatusCode::kNotFound, "task_id");
  // Another session's task: indistinguishable from a missing one.
  CheckRejected(c.s->TaskEnd(other, held.task, 1), absl::StatusCode::kNotFound, "task_id");
  CheckRejected(c.s->TaskUsage(other, held.task, kGB, 1).status(), absl::StatusCode::kNotFound,
                "task_id");
  CheckRejected(c.s->TaskGrow(other, held.task, kGB, 0, 1).status(), absl::StatusCode::kNotFound,
                "task_id");
  CheckRejected(c.s->TaskGrow(s, held.task, 0, 0, 1).status(), absl::StatusCode::kInvalidArgument,
                "extra_bytes");
  CheckRejected(c.s->CloseSession(777, 1), absl::StatusCode::kNotFound, "session_id");
  CHECK(Fingerprint(*c.s) == before);
}

TEST_CASE("mgb-sm refuses a block no SM can hold", "[core][input]") {
  Core c(Gpus(1, 16 * kGB), "mgb-sm");
  const auto s = c.Open();
  core::TaskRequest r = Request(kGB);
  r.shape.block.x = 1024;
  r.shape.registers_per_thread = 255;  // 261,120 registers > 65,536 per SM
  CheckRejected(c.s->TaskBegin(s, r, 1).status(), absl::StatusCode::kInvalidArgument,
                "shape.block");
}

TEST_CASE("Create refuses impossible GPUs", "[core][input]") {
  RecordingSink sink;
  CHECK_FALSE(core::Scheduler::Create({}, {}, &sink).ok());
  auto gpus = Gpus(1, 0);
  auto st = core::Scheduler::Create(gpus, {}, &sink);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(std::string(st.status().message()), Catch::Contains("memory_bytes"));
}

}  // namespace mgb::test
