// Shared pieces of the core unit tests: config GPUs, requests, and a sink that records events.
#ifndef MGB_TEST_SERVICE_CORE_TEST_SUPPORT_H
#define MGB_TEST_SERVICE_CORE_TEST_SUPPORT_H

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "mgb/core/scheduler.h"

namespace mgb::test {

inline constexpr uint64_t kGB = uint64_t{1} << 30;

struct RecordingSink : core::EventSink {
  std::vector<core::Event> events;
  void OnEvent(const core::Event &e) override { events.push_back(e); }
  // The GPU the task was placed on, or -1 if no kTaskPlaced event names it.
  int PlacedOn(core::TaskId task) const {
    for (const core::Event &e : events) {
      if (e.kind == core::EventKind::kTaskPlaced && e.task == task) return e.gpu;
    }
    return -1;
  }
  bool Has(core::EventKind kind, core::TaskId task) const {
    for (const core::Event &e : events) {
      if (e.kind == kind && e.task == task) return true;
    }
    return false;
  }
};

inline std::vector<core::GpuSpec> Gpus(int count, uint64_t bytes, uint32_t sms = 132) {
  std::vector<core::GpuSpec> gpus;
  for (int i = 0; i < count; ++i) {
    core::GpuSpec g;
    g.name = "g" + std::to_string(i);
    g.memory_bytes = bytes;
    g.sms = sms;
    gpus.push_back(g);
  }
  return gpus;
}

// `warps` warps as blocks of one warp each.
inline core::TaskRequest Request(uint64_t bytes, uint32_t warps = 1) {
  core::TaskRequest r;
  r.memory_bytes = bytes;
  r.shape.grid.x = warps;
  r.shape.block.x = 32;
  return r;
}

struct Core {
  RecordingSink sink;
  std::unique_ptr<core::Scheduler> s;
  Core(std::vector<core::GpuSpec> gpus, const std::string &policy, uint64_t context_reserve = 0)
      : Core(std::move(gpus), core::Options{*ParsedPolicy(policy), context_reserve}) {}
  Core(std::vector<core::GpuSpec> gpus, const core::Options &options) {
    auto created = core::Scheduler::Create(std::move(gpus), options, &sink);
    REQUIRE(created.ok());
    s = std::move(*created);
  }
  static absl::StatusOr<core::Policy> ParsedPolicy(const std::string &policy) {
    auto p = core::ParsePolicy(policy);
    REQUIRE(p.ok());
    return p;
  }
  core::SessionId Open() { return s->OpenSession(1, "test", 0); }
  // Begins and returns {task, gpu (-1 = queued)}; the request must be valid.
  core::BeginResult Begin(core::SessionId session, const core::TaskRequest &r,
                          core::Micros now = 0) {
    auto result = s->TaskBegin(session, r, now);
    REQUIRE(result.ok());
    return *result;
  }
  // A task of a process of its own (a session's tasks all go to the GPU of its first one).
  struct Solo {
    core::SessionId session = 0;
    core::TaskId task = 0;
    int gpu = -1;
  };
  Solo BeginSolo(const core::TaskRequest &r, core::Micros now = 0) {
    const core::SessionId session = Open();
    const core::BeginResult b = Begin(session, r, now);
    return Solo{session, b.task, b.gpu};
  }
  uint64_t Available(int gpu) const { return s->Status().gpus[gpu].memory_available; }
};

}  // namespace mgb::test

#endif  // MGB_TEST_SERVICE_CORE_TEST_SUPPORT_H
