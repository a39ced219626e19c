// The policies: which GPU a task gets (Choose), which GPU a blocked queue head reserves
// (ChooseReservation), and Algorithm 2's per-SM thread-block emulation (FitSms).
#include <algorithm>
#include <charconv>
#include <limits>

#include "absl/strings/str_cat.h"
#include "mgb/core/scheduler.h"

namespace mgb::core {

std::string Policy::Name() const {
  switch (kind) {
    case PolicyKind::kMgb: return "mgb";
    case PolicyKind::kMgbSm: return "mgb-sm";
    case PolicyKind::kSingle: return "single";
    case PolicyKind::kCoreToGpu: return absl::StrCat("cg:", sessions_per_gpu);
    case PolicyKind::kMemory: return "memory";
    case PolicyKind::kSchedGpu: return "schedgpu";
  }
  return "?";
}

absl::StatusOr<Policy> ParsePolicy(std::string_view name) {
  if (name == "mgb") return Policy{PolicyKind::kMgb, 0};
  if (name == "mgb-sm") return Policy{PolicyKind::kMgbSm, 0};
  if (name == "single") return Policy{PolicyKind::kSingle, 0};
  if (name == "memory") return Policy{PolicyKind::kMemory, 0};
  if (name == "schedgpu") return Policy{PolicyKind::kSchedGpu, 0};
  if (name.starts_with("cg:")) {
    const std::string_view digits = name.substr(3);
    uint32_t n = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec == std::errc() && end == digits.data() + digits.size() && n >= 1) {
      return Policy{PolicyKind::kCoreToGpu, n};
    }
    return absl::InvalidArgumentError(
        absl::StrCat("policy '", std::string(name), "': cg:N needs a whole number N >= 1"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("policy '", std::string(name),
                   "' is unknown; use one of: mgb, mgb-sm, single, cg:N, memory, schedgpu"));
}

// A process's tasks go to a GPU where it already has a context while one fits. Its tasks may share
// memory, streams and library handles in ways mgb cannot see (arrays and structs of device
// pointers, library views, handles), which work only on one device; measured on 2 x H200, five
// golden programs gave wrong results or failed when the fewest-warps rule spread their tasks over
// both GPUs. Only when none of its GPUs has room may a task go elsewhere: waiting there could
// deadlock a process whose other task holds the room (two concurrent tasks, one per GPU).
Scheduler::Fit Scheduler::Choose(const Session &s, const Task &t,
                                 const std::vector<bool> &excluded_by_caller) const {
  // A GPU the task's process cannot open is never chosen (TaskRequest::visible_pci_bus_ids).
  std::vector<bool> excluded = excluded_by_caller;
  for (int g = 0; g < gpu_count(); ++g) excluded[g] = excluded[g] || Closed(t, g);
  const PolicyKind kind = options_.policy.kind;
  if (kind == PolicyKind::kSingle || kind == PolicyKind::kCoreToGpu || options_.spread_tasks) {
    return ChooseAmong(s, t, excluded);
  }
  std::vector<bool> elsewhere = excluded;
  bool has_context = false;
  for (int g = 0; g < gpu_count(); ++g) {
    // The GPU its earlier CUDA objects live on counts as one of its own (TaskRequest).
    if (s.context[g] == ContextState::kNone && g != t.preferred_gpu)
      elsewhere[g] = true;
    else
      has_context = true;
  }
  if (has_context) {
    if (Fit fit = ChooseAmong(s, t, elsewhere); fit.gpu >= 0) return fit;
  }
  return ChooseAmong(s, t, excluded);
}

// Fewer warps in use wins. Ties (idle GPUs above all, and tasks that each ask for a whole GPU)
// go to the GPU fewer processes have a context on, then to the one with fewer tasks: a process's
// later tasks follow its context (Choose), so where its first task goes decides where its work
// runs. Measured on 2 x H100 before this rule, the paper's 16-job mix put 11 processes on GPU 0
// and 5 on GPU 1, every tie between idle GPUs having gone to GPU 0.
bool Scheduler::LessLoaded(const GpuState &a, const GpuState &b) {
  if (a.warps != b.warps) return a.warps < b.warps;
  if (a.contexts != b.contexts) return a.contexts < b.contexts;
  return a.tasks < b.tasks;
}

Scheduler::Fit Scheduler::ChooseAmong(const Session &s, const Task &t,
                                      const std::vector<bool> &excluded) const {
  const int n = gpu_count();
  switch (options_.policy.kind) {
    case PolicyKind::kMgb: {  // Algorithm 3 as its text means it: fewest warps in use
      int best = -1;
      for (int g = 0; g < n; ++g) {
        if (excluded[g] || !FitsMemory(s, g, t.memory) || !AdmitsDemand(gpus_[g], t)) continue;
        if (best < 0 || LessLoaded(gpus_[g], gpus_[best])) best = g;
      }
      return Fit{best, {}};
    }
    case PolicyKind::kMemory: {
      int best = -1;
      for (int g = 0; g < n; ++g) {
        if (excluded[g] || !FitsMemory(s, g, t.memory)) continue;
        if (best < 0 || Available(gpus_[g]) > Available(gpus_[best])) best = g;
      }
      return Fit{best, {}};
    }
    case PolicyKind::kSchedGpu: {
      for (int g = 0; g < n; ++g) {
        if (!excluded[g] && FitsMemory(s, g, t.memory)) return Fit{g, {}};
      }
      return Fit{};
    }
    case PolicyKind::kMgbSm: {  // Algorithm 2: the first GPU where memory and every block fit
      for (int g = 0; g < n; ++g) {
        if (excluded[g] || !FitsMemory(s, g, t.memory)) continue;
        if (auto blocks = FitSms(gpus_[g], t.shape)) return Fit{g, std::move(*blocks)};
      }
      return Fit{};
    }
    case PolicyKind::kSingle: {
      // A session's later tasks stay on its own GPU, reservation or not: it already owns it.
      if (s.pinned_gpu >= 0) {
        return Fit{FitsMemory(s, s.pinned_gpu, t.memory) ? s.pinned_gpu : -1, {}};
      }
      for (int g = 0; g < n; ++g) {
        if (!excluded[g] && gpus_[g].pinned_sessions == 0 && FitsMemory(s, g, t.memory)) {
          return Fit{g, {}};
        }
      }
      return Fit{};
    }
    case PolicyKind::kCoreToGpu: {  // memory-blind by design
      if (s.pinned_gpu >= 0) return Fit{s.pinned_gpu, {}};
      for (int i = 0; i < n; ++i) {
        const int g = static_cast<int>((cg_next_ + i) % n);
        if (!excluded[g] && gpus_[g].pinned_sessions < options_.policy.sessions_per_gpu) {
          return Fit{g, {}};
        }
      }
      return Fit{};
    }
  }
  return Fit{};
}

int Scheduler::ChooseReservation(const Task &t) const {
  const Session &s = sessions_.at(t.session);
  if (s.pinned_gpu >= 0) return s.pinned_gpu;
  const bool per_sm = options_.policy.kind == PolicyKind::kMgbSm;
  const bool memory_blind = options_.policy.kind == PolicyKind::kCoreToGpu;
  int best = -1;
  for (int g = 0; g < gpu_count(); ++g) {
    const GpuState &gpu = gpus_[g];
    if (Hidden(t, g)) continue;
    if (!memory_blind && gpu.spec.memory_bytes < Needed(s, g, t.memory)) continue;
    if (per_sm && BlocksPerEmptySm(gpu.spec, t.shape) == 0) continue;
    if (best < 0 || Available(gpu) > Available(gpus_[best])) best = g;
  }
  if (best >= 0) return best;
  // Validation guarantees a GPU it can open that can hold it; the largest is a safe fallback.
  for (int g = 0; g < gpu_count(); ++g) {
    if (Hidden(t, g)) continue;
    if (best < 0 || gpus_[g].spec.memory_bytes > gpus_[best].spec.memory_bytes) best = g;
  }
  return best;
}

namespace {

struct BlockCost {
  uint32_t warps, registers, shared_bytes;
};

BlockCost CostOf(const LaunchShape &shape) {
  const auto threads = static_cast<uint32_t>(shape.threads_per_block());
  return {static_cast<uint32_t>(shape.warps_per_block()), shape.registers_per_thread * threads,
          shape.shared_bytes_per_block};
}

// How many more blocks of this cost an SM with the given use can take.
uint32_t Room(const SmLimits &lim, uint32_t blocks, uint32_t warps, uint32_t registers,
              uint32_t shared, const BlockCost &c) {
  uint32_t room = lim.max_blocks > blocks ? lim.max_blocks - blocks : 0;
  room = std::min(room, lim.max_warps > warps ? (lim.max_warps - warps) / c.warps : 0);
  if (c.registers > 0) {
    room =
        std::min(room, lim.registers > registers ? (lim.registers - registers) / c.registers : 0);
  }
  if (c.shared_bytes > 0) {
    room = std::min(room,
                    lim.shared_bytes > shared ? (lim.shared_bytes - shared) / c.shared_bytes : 0);
  }
  return room;
}

// An upper bound on the blocks of this cost the whole GPU can still take: Room over the summed
// use of all SMs (each SM's use is within its limits, so per-resource sums bound per-SM sums).
uint64_t RoomByTotals(const GpuSpec &spec, uint64_t blocks, uint64_t warps, uint64_t registers,
                      uint64_t shared, const BlockCost &c) {
  const uint64_t sms = spec.sms;
  auto left = [](uint64_t limit, uint64_t used) { return limit > used ? limit - used : 0; };
  uint64_t room = left(sms * spec.sm.max_blocks, blocks);
  room = std::min(room, left(sms * spec.sm.max_warps, warps) / c.warps);
  if (c.registers > 0)
    room = std::min(room, left(sms * spec.sm.registers, registers) / c.registers);
  if (c.shared_bytes > 0)
    room = std::min(room, left(sms * spec.sm.shared_bytes, shared) / c.shared_bytes);
  return room;
}

}  // namespace

uint32_t Scheduler::BlocksPerEmptySm(const GpuSpec &spec, const LaunchShape &shape) {
  return Room(spec.sm, 0, 0, 0, 0, CostOf(shape));
}

uint64_t Scheduler::MinWarps(const LaunchShape &shape) const {
  uint64_t fewest = std::numeric_limits<uint64_t>::max();
  for (const GpuState &g : gpus_) {
    const uint32_t per_sm = BlocksPerEmptySm(g.spec, shape);
    if (per_sm == 0) continue;
    const uint64_t want = std::min<uint64_t>(shape.blocks(), uint64_t{per_sm} * g.spec.sms);
    fewest = std::min(fewest, want * CostOf(shape).warps);  // as FitSms counts them
  }
  return fewest;
}

uint64_t Scheduler::MinDemand(const LaunchShape &shape) const {
  uint64_t fewest = std::numeric_limits<uint64_t>::max();
  for (const GpuState &g : gpus_) fewest = std::min(fewest, WarpsOn(g, shape));
  return fewest;
}

std::optional<std::vector<uint16_t>> Scheduler::FitSms(const GpuState &g,
                                                       const LaunchShape &shape) const {
  const BlockCost cost = CostOf(shape);
  const uint32_t per_sm = BlocksPerEmptySm(g.spec, shape);
  if (per_sm == 0) return std::nullopt;
  const uint64_t sms = g.spec.sms;
  const uint64_t want = std::min<uint64_t>(shape.blocks(), per_sm * sms);
  // Cheap necessary conditions before the per-SM walk: enough warps left on the whole GPU, and
  // enough room by the GPU's totals (a sum of per-SM rooms is at most the room of the sums).
  if (g.warps + want * cost.warps > g.spec.warp_capacity()) return std::nullopt;
  const SmTotal &used = g.sm_total;
  if (RoomByTotals(g.spec, used.blocks, used.warps, used.registers, used.shared_bytes, cost) <
      want) {
    return std::nullopt;
  }
  std::vector<uint32_t> &room = room_scratch_;
  room.assign(sms, 0);
  uint64_t total = 0;
  for (uint64_t i = 0; i < sms; ++i) {
    const SmUse &u = g.sm_use[i];
    room[i] = Room(g.spec.sm, u.blocks, u.warps, u.registers, u.shared_bytes, cost);
    total += room[i];
  }
  if (total < want) return std::nullopt;
  // Hardware hands blocks out round robin, one per SM with room: that is water-filling to the
  // lowest level L with sum(min(room, L)) >= want; SMs at the level take the last blocks in
  // round-robin order from next_sm.
  uint32_t lo = 0, hi = per_sm;
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    uint64_t sum = 0;
    for (uint32_t r : room) sum += std::min(r, mid);
    if (sum >= want)
      hi = mid;
    else
      lo = mid + 1;
  }
  const uint32_t level = lo;
  std::vector<uint16_t> blocks(sms);
  uint64_t given = 0;
  for (uint64_t i = 0; i < sms; ++i) {
    blocks[i] = static_cast<uint16_t>(std::min(room[i], level > 0 ? level - 1 : 0));
    given += blocks[i];
  }
  for (uint64_t k = 0; k < sms && given < want; ++k) {
    const uint64_t i = (g.next_sm + k) % sms;
    if (room[i] >= level && level > 0) {
      ++blocks[i];
      ++given;
    }
  }
  return blocks;
}

}  // namespace mgb::core
