// A test-only reference for mgb::core::Scheduler's decisions: the same rules written the
// straightforward way (no indexes, no bounds, no cached totals). After a release it tries every
// waiting task in FIFO order with a full Choose; mgb-sm computes every SM's room afresh. The
// equivalence test drives both with one random workload and requires identical event streams.
// It trusts the real scheduler for input validation (it is only called with accepted requests).
// Grow liveness is written out as the rule reads: after every event, on every GPU, while the
// oldest waiting grow could not fit even if every task not waiting to grow ended, fail the
// youngest.
#ifndef MGB_TEST_SERVICE_CORE_REFERENCE_SCHEDULER_H
#define MGB_TEST_SERVICE_CORE_REFERENCE_SCHEDULER_H

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "mgb/core/scheduler.h"

namespace mgb::test {

class ReferenceScheduler {
 public:
  ReferenceScheduler(std::vector<core::GpuSpec> specs, core::Options options, core::EventSink *sink)
      : options_(options), sink_(sink) {
    for (core::GpuSpec &spec : specs) {
      Gpu g;
      g.nvml_free = spec.memory_bytes;
      g.sm_use.resize(spec.sms);
      g.spec = std::move(spec);
      gpus_.push_back(std::move(g));
    }
  }

  core::SessionId OpenSession(core::Micros now, uint32_t queue_priority = 0) {
    const core::SessionId id = next_session_++;
    sessions_[id].context.assign(gpus_.size(), kNone);
    sessions_[id].queue_priority = options_.queue_priority ? queue_priority : 0;
    Emit({core::EventKind::kSessionOpened, now, id});
    return id;
  }

  bool CloseSession(core::SessionId id, core::Micros now) {
    if (!sessions_.contains(id)) return false;
    Session &s = sessions_.at(id);
    for (core::TaskId task : s.tasks) {
      Task &t = tasks_.at(task);
      if (t.gpu < 0) {
        Dequeue(task, t);
        EmitTask(core::EventKind::kTaskCancelled, task, t, now, false,
                 core::CancelReason::kSessionClosed);
      } else {
        if (t.grow_extra > 0) {
          EmitTask(core::EventKind::kTaskCancelled, task, t, now, true,
                   core::CancelReason::kSessionClosed);
          DropGrow(task, t);
        }
        Release(t);
        EmitTask(core::EventKind::kTaskEnded, task, t, now);
      }
      tasks_.erase(task);
    }
    for (size_t g = 0; g < gpus_.size(); ++g) {
      if (s.context[g] == kNone) continue;
      --gpus_[g].contexts;
      if (s.context[g] == kCharged) --gpus_[g].pending_contexts;
    }
    if (s.pinned_gpu >= 0) --gpus_[s.pinned_gpu].pinned_sessions;
    sessions_.erase(id);
    Emit({core::EventKind::kSessionClosed, now, id});
    RetryWaiting(now);
    return true;
  }

  // The GPU, -1 if queued, nullopt for a deadline already passed (nothing is created then).
  std::optional<int> TaskBegin(core::SessionId session, const core::TaskRequest &r,
                               core::Micros now) {
    Session &s = sessions_.at(session);
    Task t;
    t.session = session;
    t.memory = r.memory_bytes;
    t.shape = r.shape;
    t.deadline = r.deadline;
    std::vector<bool> excluded(gpus_.size(), false);
    if (head_gpu_ >= 0) excluded[head_gpu_] = true;
    Fit fit = BehindHead(s, t, excluded);
    if (fit.gpu < 0 && t.deadline != 0 && t.deadline <= now) return std::nullopt;
    const core::TaskId id = next_task_++;
    // Higher priority first, then arrival: the lower the order, the earlier in the queue.
    const uint64_t behind = core::kMaxQueuePriority - s.queue_priority;
    t.order = behind * (uint64_t{1} << 44) + next_seq_++;
    Task &stored = tasks_.emplace(id, t).first->second;
    s.tasks.insert(id);
    if (fit.gpu >= 0) {
      Place(id, stored, fit, now);
      FailHopelessGrows(now);
      return fit.gpu;
    }
    stored.queue_seq = stored.order;
    waiting_.emplace(stored.queue_seq, id);
    if (stored.deadline != 0) deadlines_.emplace(stored.deadline, id);
    EmitTask(core::EventKind::kTaskQueued, id, stored, now);
    if (waiting_.size() == 1) {
      stored.reserved_gpu = ChooseReservation(stored);
      head_gpu_ = stored.reserved_gpu;
      head_task_ = id;
    }
    return -1;
  }

  // True if grown at once; nullopt for a refused grow (the real one's error cases).
  std::optional<bool> TaskGrow(core::SessionId session, core::TaskId id, uint64_t extra,
                               core::Micros deadline, core::Micros now) {
    Task *t = Owned(session, id);
    if (t == nullptr || t->gpu < 0 || t->grow_extra > 0 || extra == 0) return std::nullopt;
    const Gpu &g = gpus_[t->gpu];
    const uint64_t own_context = Blind() ? 0 : options_.context_reserve_bytes;
    if (extra > g.spec.memory_bytes || t->memory + own_context + extra > g.spec.memory_bytes)
      return std::nullopt;
    const std::vector<core::TaskId> queue = GrowsOn(t->gpu);
    const bool fits = Blind() || Available(g) >= extra;
    if (fits && queue.empty()) {
      ApplyGrow(id, *t, extra, now);
      return true;
    }
    // Would waiting (holding its memory) leave the oldest grow here hopeless?
    const uint64_t oldest_extra = queue.empty() ? extra : tasks_.at(queue.front()).grow_extra;
    if (!Blind() && RoomForGrows(t->gpu, t->memory) < oldest_extra) {
      if (!fits) return std::nullopt;  // RESOURCE_EXHAUSTED
      ApplyGrow(id, *t, extra, now);
      return true;
    }
    if (deadline != 0 && deadline <= now) return std::nullopt;
    t->grow_extra = extra;
    t->grow_seq = next_seq_++;
    t->grow_deadline = deadline;
    growing_.emplace(t->grow_seq, id);
    if (deadline != 0) grow_deadlines_.emplace(deadline, id);
    EmitTask(core::EventKind::kTaskQueued, id, *t, now, true);
    return false;
  }

  bool TaskUsage(core::SessionId session, core::TaskId id, uint64_t allocated) {
    Task *t = Owned(session, id);
    if (t == nullptr || t->gpu < 0) return false;
    Gpu &g = gpus_[t->gpu];
    g.unallocated -= Unallocated(*t);
    t->allocated = allocated;
    g.unallocated += Unallocated(*t);
    Session &s = sessions_.at(session);
    if (allocated > 0 && s.context[t->gpu] == kCharged) {
      s.context[t->gpu] = kConfirmed;
      --g.pending_contexts;
    }
    return true;
  }

  bool TaskEnd(core::SessionId session, core::TaskId id, core::Micros now) {
    Task *t = Owned(session, id);
    if (t == nullptr) return false;
    if (t->gpu < 0) {
      Dequeue(id, *t);
      EmitTask(core::EventKind::kTaskCancelled, id, *t, now, false, core::CancelReason::kCancelled);
    } else {
      if (t->grow_extra > 0) {
        EmitTask(core::EventKind::kTaskCancelled, id, *t, now, true,
                 core::CancelReason::kCancelled);
        DropGrow(id, *t);
      }
      Release(*t);
      EmitTask(core::EventKind::kTaskEnded, id, *t, now);
    }
    sessions_.at(session).tasks.erase(id);
    tasks_.erase(id);
    RetryWaiting(now);
    return true;
  }

  bool CancelWaiting(core::SessionId session, core::TaskId id, bool is_grow, core::Micros now) {
    Task *t = Owned(session, id);
    if (t == nullptr) return false;
    if (is_grow) {
      if (t->grow_extra == 0) return false;
      EmitTask(core::EventKind::kTaskCancelled, id, *t, now, true, core::CancelReason::kCancelled);
      DropGrow(id, *t);
    } else {
      if (t->gpu >= 0) return false;
      Dequeue(id, *t);
      EmitTask(core::EventKind::kTaskCancelled, id, *t, now, false, core::CancelReason::kCancelled);
      sessions_.at(session).tasks.erase(id);
      tasks_.erase(id);
    }
    RetryWaiting(now);
    return true;
  }

  void ExpireDeadlines(core::Micros now) {
    bool any = false;
    while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
      const core::TaskId id = deadlines_.begin()->second;
      Task &t = tasks_.at(id);
      Dequeue(id, t);
      EmitTask(core::EventKind::kTaskCancelled, id, t, now, false, core::CancelReason::kDeadline);
      sessions_.at(t.session).tasks.erase(id);
      tasks_.erase(id);
      any = true;
    }
    while (!grow_deadlines_.empty() && grow_deadlines_.begin()->first <= now) {
      const core::TaskId id = grow_deadlines_.begin()->second;
      Task &t = tasks_.at(id);
      EmitTask(core::EventKind::kTaskCancelled, id, t, now, true, core::CancelReason::kDeadline);
      DropGrow(id, t);
      any = true;
    }
    if (any) RetryWaiting(now);
  }

  void UpdateDeviceMemory(int gpu, uint64_t free_bytes, uint64_t used_bytes, core::Micros now) {
    if (!gpus_[gpu].spec.has_nvml) return;
    gpus_[gpu].nvml_free = free_bytes;
    gpus_[gpu].nvml_used = used_bytes;
    RetryWaiting(now);
  }

  size_t waiting_count() const { return waiting_.size(); }

 private:
  enum Context { kNone, kCharged, kConfirmed };
  struct SmUse {
    uint64_t blocks = 0, warps = 0, registers = 0, shared = 0;
  };
  struct Gpu {
    core::GpuSpec spec;
    uint64_t reserved = 0, unallocated = 0, nvml_free = 0, nvml_used = 0, warps = 0;
    uint32_t contexts = 0, pending_contexts = 0, pinned_sessions = 0, next_sm = 0;
    std::vector<SmUse> sm_use;
  };
  struct Session {
    std::vector<Context> context;
    int pinned_gpu = -1;
    std::set<core::TaskId> tasks;
    uint32_t queue_priority = 0;
  };
  struct Task {
    core::SessionId session = 0;
    uint64_t memory = 0, allocated = 0, warps = 0;
    core::LaunchShape shape;
    int gpu = -1, reserved_gpu = -1;
    core::Micros deadline = 0, grow_deadline = 0;
    uint64_t order = 0, queue_seq = 0, grow_extra = 0, grow_seq = 0;
    std::vector<uint64_t> sm_blocks;
  };
  struct Fit {
    int gpu = -1;
    std::vector<uint64_t> sm_blocks;
  };

  bool Blind() const { return options_.policy.kind == core::PolicyKind::kCoreToGpu; }
  static uint64_t Sub(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }
  static uint64_t Unallocated(const Task &t) { return Sub(t.memory, t.allocated); }

  Task *Owned(core::SessionId session, core::TaskId id) {
    auto it = tasks_.find(id);
    if (!sessions_.contains(session) || it == tasks_.end() || it->second.session != session)
      return nullptr;
    return &it->second;
  }

  uint64_t Available(const Gpu &g) const {
    const uint64_t reserve = options_.context_reserve_bytes;
    const uint64_t by_capacity = Sub(g.spec.memory_bytes, g.reserved + g.contexts * reserve);
    if (!g.spec.has_nvml) return by_capacity;
    return std::min(by_capacity, Sub(g.nvml_free, g.unallocated + g.pending_contexts * reserve));
  }
  uint64_t Needed(const Session &s, int g, uint64_t memory) const {
    return memory + (s.context[g] == kNone ? options_.context_reserve_bytes : 0);
  }
  // A task never takes the room a grow waiting on that GPU waits for.
  bool FitsMemory(const Session &s, int g, uint64_t memory) const {
    uint64_t growing = 0;
    for (core::TaskId id : GrowsOn(g)) growing += tasks_.at(id).grow_extra;
    return Sub(Available(gpus_[g]), growing) >= Needed(s, g, memory) && ContextRuleAllows(s, g);
  }
  // A new context (not the GPU's first): all contexts there stay within half the GPU, and the
  // blocked head (another session's) still fits beside them once every task there has ended.
  bool ContextRuleAllows(const Session &s, int g) const {
    const uint64_t reserve = options_.context_reserve_bytes;
    if (s.context[g] != kNone || reserve == 0 || gpus_[g].contexts == 0) return true;
    const uint64_t total = gpus_[g].spec.memory_bytes;
    const uint64_t contexts = (gpus_[g].contexts + 1) * reserve;
    if (2 * contexts > total) return false;
    if (head_task_ == 0) return true;
    const Task &head = tasks_.at(head_task_);
    if (head.reserved_gpu != g || &sessions_.at(head.session) == &s) return true;
    return contexts + Needed(sessions_.at(head.session), g, head.memory) <= total;
  }

  // Blocks of this shape an SM with this use can still take.
  static uint64_t Room(const core::SmLimits &lim, const SmUse &u, const core::LaunchShape &shape) {
    const uint64_t wpb = shape.warps_per_block();
    const uint64_t rpb = uint64_t{shape.registers_per_thread} * shape.threads_per_block();
    const uint64_t spb = shape.shared_bytes_per_block;
    uint64_t room = std::min(Sub(lim.max_blocks, u.blocks), Sub(lim.max_warps, u.warps) / wpb);
    if (rpb > 0) room = std::min(room, Sub(lim.registers, u.registers) / rpb);
    if (spb > 0) room = std::min(room, Sub(lim.shared_bytes, u.shared) / spb);
    return room;
  }

  // Hardware round robin from next_sm, one block per SM with room per turn, as a plain loop.
  std::optional<std::vector<uint64_t>> FitSms(const Gpu &g, const core::LaunchShape &shape) const {
    const uint64_t per_sm = Room(g.spec.sm, SmUse{}, shape);
    if (per_sm == 0) return std::nullopt;
    const uint64_t sms = g.spec.sms;
    const uint64_t want = std::min(shape.blocks(), per_sm * sms);
    if (g.warps + want * shape.warps_per_block() > g.spec.warp_capacity()) return std::nullopt;
    std::vector<uint64_t> room(sms), blocks(sms, 0);
    uint64_t total = 0;
    for (uint64_t i = 0; i < sms; ++i) total += room[i] = Room(g.spec.sm, g.sm_use[i], shape);
    if (total < want) return std::nullopt;
    uint64_t given = 0;
    while (given < want) {
      for (uint64_t k = 0; k < sms && given < want; ++k) {
        const uint64_t i = (g.next_sm + k) % sms;
        if (blocks[i] < room[i]) {
          ++blocks[i];
          ++given;
        }
      }
    }
    return blocks;
  }

  // Memory-aware policies: the session's own GPUs (a context there) first, the others only when
  // none of those fits.
  Fit Choose(const Session &s, const Task &t, const std::vector<bool> &excluded) const {
    if (options_.policy.kind != core::PolicyKind::kSingle && !Blind() && !options_.spread_tasks) {
      std::vector<bool> others = excluded;
      bool any = false;
      for (size_t g = 0; g < gpus_.size(); ++g) {
        if (s.context[g] == kNone)
          others[g] = true;
        else
          any = true;
      }
      if (any) {
        if (Fit fit = ChooseFrom(s, t, others); fit.gpu >= 0) return fit;
      }
    }
    return ChooseFrom(s, t, excluded);
  }

  // mgb: fewest warps, then fewest contexts, then fewest tasks.
  std::tuple<uint64_t, uint32_t, size_t> Load(int g) const {
    size_t placed = 0;
    for (const auto &[id, t] : tasks_) placed += t.gpu == g;
    return {gpus_[g].warps, gpus_[g].contexts, placed};
  }

  // The share of the SMs the resident blocks of `shape` take, in warps of the GPU's capacity.
  static uint64_t Demand(const core::GpuSpec &spec, const core::LaunchShape &shape) {
    const uint64_t per_sm = Room(spec.sm, SmUse{}, shape);
    if (per_sm == 0) return std::min(shape.warps(), spec.warp_capacity());
    const uint64_t resident = std::min(shape.blocks(), per_sm * spec.sms);
    const uint64_t warps = (resident * spec.sm.max_warps + per_sm - 1) / per_sm;
    return std::min(warps, spec.warp_capacity());
  }

  Fit ChooseFrom(const Session &s, const Task &t, const std::vector<bool> &excluded) const {
    const int n = static_cast<int>(gpus_.size());
    Fit fit;
    switch (options_.policy.kind) {
      case core::PolicyKind::kMgb:
      case core::PolicyKind::kMemory:
        for (int g = 0; g < n; ++g) {
          if (excluded[g] || !FitsMemory(s, g, t.memory)) continue;
          const int best = fit.gpu < 0 ? g : fit.gpu;
          const bool better = options_.policy.kind == core::PolicyKind::kMgb
                                  ? Load(g) < Load(best)
                                  : Available(gpus_[g]) > Available(gpus_[best]);
          if (fit.gpu < 0 || better) fit.gpu = g;
        }
        return fit;
      case core::PolicyKind::kSchedGpu:
        for (int g = 0; g < n; ++g)
          if (!excluded[g] && FitsMemory(s, g, t.memory)) return Fit{g, {}};
        return fit;
      case core::PolicyKind::kMgbSm:
        for (int g = 0; g < n; ++g) {
          if (excluded[g] || !FitsMemory(s, g, t.memory)) continue;
          if (auto blocks = FitSms(gpus_[g], t.shape)) return Fit{g, *blocks};
        }
        return fit;
      case core::PolicyKind::kSingle:
        if (s.pinned_gpu >= 0)
          return Fit{FitsMemory(s, s.pinned_gpu, t.memory) ? s.pinned_gpu : -1, {}};
        for (int g = 0; g < n; ++g) {
          if (!excluded[g] && gpus_[g].pinned_sessions == 0 && FitsMemory(s, g, t.memory))
            return Fit{g, {}};
        }
        return fit;
      case core::PolicyKind::kCoreToGpu:
        if (s.pinned_gpu >= 0) return Fit{s.pinned_gpu, {}};
        for (int i = 0; i < n; ++i) {
          const int g = static_cast<int>((cg_next_ + i) % n);
          if (!excluded[g] && gpus_[g].pinned_sessions < options_.policy.sessions_per_gpu)
            return Fit{g, {}};
        }
        return fit;
    }
    return fit;
  }

  bool Shadows() const {
    return options_.policy.kind == core::PolicyKind::kMgb ||
           options_.policy.kind == core::PolicyKind::kMemory ||
           options_.policy.kind == core::PolicyKind::kSchedGpu;
  }

  // Behind a blocked head: Choose among the GPUs not excluded; else (mgb, memory) the head's GPU
  // if the task fits there now and the head would still fit there with every task placed there
  // that comes after it in queue order (after it began, without priorities), this one included,
  // each session of them (the head's too) with a context reserve.
  Fit BehindHead(const Session &s, const Task &t, const std::vector<bool> &excluded) const {
    Fit fit = Choose(s, t, excluded);
    if (fit.gpu >= 0 || head_task_ == 0 || !Shadows()) return fit;
    const Task &head = tasks_.at(head_task_);
    const int gpu = head.reserved_gpu;
    std::set<core::SessionId> sessions{head.session, t.session};
    uint64_t held = head.memory + t.memory;
    for (const auto &[id, other] : tasks_) {
      if (other.order > head.order && other.gpu == gpu) {
        held += other.memory;
        sessions.insert(other.session);
      }
    }
    held += sessions.size() * options_.context_reserve_bytes;
    if (FitsMemory(s, gpu, t.memory) && held <= gpus_[gpu].spec.memory_bytes) return Fit{gpu, {}};
    return Fit{};
  }

  int ChooseReservation(const Task &t) const {
    const Session &s = sessions_.at(t.session);
    if (s.pinned_gpu >= 0) return s.pinned_gpu;
    int best = -1;
    for (int g = 0; g < static_cast<int>(gpus_.size()); ++g) {
      if (!Blind() && gpus_[g].spec.memory_bytes < Needed(s, g, t.memory)) continue;
      if (options_.policy.kind == core::PolicyKind::kMgbSm &&
          Room(gpus_[g].spec.sm, SmUse{}, t.shape) == 0)
        continue;
      if (best < 0 || Available(gpus_[g]) > Available(gpus_[best])) best = g;
    }
    if (best >= 0) return best;
    best = 0;
    for (int g = 1; g < static_cast<int>(gpus_.size()); ++g) {
      if (gpus_[g].spec.memory_bytes > gpus_[best].spec.memory_bytes) best = g;
    }
    return best;
  }

  void Place(core::TaskId id, Task &t, const Fit &fit, core::Micros now) {
    if (t.queue_seq != 0) Dequeue(id, t);
    Session &s = sessions_.at(t.session);
    Gpu &g = gpus_[fit.gpu];
    if (s.context[fit.gpu] == kNone) {
      s.context[fit.gpu] = kCharged;
      ++g.contexts;
      ++g.pending_contexts;
    }
    t.gpu = fit.gpu;
    t.reserved_gpu = -1;
    if (options_.policy.kind == core::PolicyKind::kMgbSm) {
      t.sm_blocks = fit.sm_blocks;
      uint64_t blocks = 0;
      for (size_t sm = 0; sm < t.sm_blocks.size(); ++sm) blocks += t.sm_blocks[sm];
      ChargeSms(g, t, +1);
      g.next_sm = static_cast<uint32_t>((g.next_sm + blocks) % g.spec.sms);
      t.warps = blocks * t.shape.warps_per_block();
    } else {
      t.warps = Demand(g.spec, t.shape);
    }
    g.reserved += t.memory;
    g.unallocated += Unallocated(t);
    g.warps += t.warps;
    const bool pins = options_.policy.kind == core::PolicyKind::kSingle || Blind();
    if (pins && s.pinned_gpu < 0) {
      s.pinned_gpu = fit.gpu;
      ++g.pinned_sessions;
      cg_next_ = static_cast<uint32_t>((fit.gpu + 1) % gpus_.size());
    }
    EmitTask(core::EventKind::kTaskPlaced, id, t, now);
  }

  void ChargeSms(Gpu &g, const Task &t, int sign) {
    const uint64_t wpb = t.shape.warps_per_block();
    const uint64_t rpb = uint64_t{t.shape.registers_per_thread} * t.shape.threads_per_block();
    for (size_t sm = 0; sm < t.sm_blocks.size(); ++sm) {
      const uint64_t n = t.sm_blocks[sm];
      SmUse &u = g.sm_use[sm];
      u.blocks += sign * n;
      u.warps += sign * n * wpb;
      u.registers += sign * n * rpb;
      u.shared += sign * n * t.shape.shared_bytes_per_block;
    }
  }

  void Release(Task &t) {
    Gpu &g = gpus_[t.gpu];
    g.reserved -= t.memory;
    g.unallocated -= Unallocated(t);
    g.warps -= t.warps;
    ChargeSms(g, t, -1);
  }

  void Dequeue(core::TaskId id, Task &t) {
    waiting_.erase(t.queue_seq);
    if (t.deadline != 0) deadlines_.erase({t.deadline, id});
    t.queue_seq = 0;
  }

  void DropGrow(core::TaskId id, Task &t) {
    growing_.erase(t.grow_seq);
    if (t.grow_deadline != 0) grow_deadlines_.erase({t.grow_deadline, id});
    t.grow_extra = t.grow_seq = 0;
    t.grow_deadline = 0;
  }

  void ApplyGrow(core::TaskId id, Task &t, uint64_t extra, core::Micros now) {
    Gpu &g = gpus_[t.gpu];
    g.reserved += extra;
    g.unallocated -= Unallocated(t);
    t.memory += extra;
    g.unallocated += Unallocated(t);
    Emit({core::EventKind::kTaskGrown, now, t.session, id, t.gpu, t.memory, t.warps, false,
          core::CancelReason::kNone, extra});
  }

  // Grows first (FIFO per GPU); then every waiting task in FIFO order: the first that cannot be
  // placed is the head and reserves its GPU; every later one is tried on the other GPUs.
  void RetryWaiting(core::Micros now) {
    std::vector<bool> blocked(gpus_.size(), false);
    for (const auto &[seq, id] : std::map<uint64_t, core::TaskId>(growing_)) {
      Task &t = tasks_.at(id);
      if (blocked[t.gpu] || (!Blind() && Available(gpus_[t.gpu]) < t.grow_extra)) {
        blocked[t.gpu] = true;
        continue;
      }
      const uint64_t extra = t.grow_extra;
      DropGrow(id, t);
      ApplyGrow(id, t, extra, now);
    }
    head_gpu_ = -1;
    head_task_ = 0;
    std::vector<bool> excluded(gpus_.size(), false);
    for (const auto &[seq, id] : std::map<uint64_t, core::TaskId>(waiting_)) {
      Task &t = tasks_.at(id);
      Fit fit = BehindHead(sessions_.at(t.session), t, excluded);
      if (fit.gpu >= 0) {
        Place(id, t, fit, now);
      } else if (head_gpu_ < 0) {
        if (t.reserved_gpu < 0) t.reserved_gpu = ChooseReservation(t);
        head_gpu_ = t.reserved_gpu;
        head_task_ = id;
        excluded[head_gpu_] = true;
        if (gpus_.size() == 1 && !Shadows()) break;
      }
    }
    FailHopelessGrows(now);
  }

  // The tasks waiting to grow on a GPU, oldest grow first.
  std::vector<core::TaskId> GrowsOn(int gpu) const {
    std::vector<core::TaskId> queue;
    for (const auto &[seq, id] : growing_) {
      if (tasks_.at(id).gpu == gpu) queue.push_back(id);
    }
    return queue;
  }

  // What the GPU could offer a grow if every task there not waiting to grow ended, with `more`
  // held besides (a grow about to wait).
  uint64_t RoomForGrows(int gpu, uint64_t more) const {
    uint64_t held = more;
    for (core::TaskId id : GrowsOn(gpu)) held += tasks_.at(id).memory;
    const Gpu &g = gpus_[gpu];
    return Sub(g.spec.memory_bytes, g.contexts * options_.context_reserve_bytes + held);
  }

  // A pass fails at most the youngest grow of each GPU whose oldest grow is hopeless; repeat.
  void FailHopelessGrows(core::Micros now) {
    if (Blind()) return;
    for (bool failed = true; failed;) {
      failed = false;
      for (int gpu = 0; gpu < static_cast<int>(gpus_.size()); ++gpu) {
        const std::vector<core::TaskId> queue = GrowsOn(gpu);
        if (queue.empty() || RoomForGrows(gpu, 0) >= tasks_.at(queue.front()).grow_extra) continue;
        Task &t = tasks_.at(queue.back());
        EmitTask(core::EventKind::kTaskCancelled, queue.back(), t, now, true,
                 core::CancelReason::kNoRoom);
        DropGrow(queue.back(), t);
        failed = true;
      }
    }
  }

  void Emit(core::Event e) { sink_->OnEvent(e); }
  void EmitTask(core::EventKind kind, core::TaskId id, const Task &t, core::Micros now,
                bool is_grow = false, core::CancelReason reason = core::CancelReason::kNone) {
    Emit({kind, now, t.session, id, t.gpu, t.memory, t.warps, is_grow, reason,
          is_grow ? t.grow_extra : 0});
  }

  std::vector<Gpu> gpus_;
  core::Options options_;
  core::EventSink *sink_;
  std::map<core::SessionId, Session> sessions_;
  std::map<core::TaskId, Task> tasks_;
  std::map<uint64_t, core::TaskId> waiting_, growing_;
  std::set<std::pair<core::Micros, core::TaskId>> deadlines_, grow_deadlines_;
  int head_gpu_ = -1;
  core::TaskId head_task_ = 0;
  uint32_t cg_next_ = 0;
  uint64_t next_seq_ = 1;
  core::SessionId next_session_ = 1;
  core::TaskId next_task_ = 1;
};

}  // namespace mgb::test

#endif  // MGB_TEST_SERVICE_CORE_REFERENCE_SCHEDULER_H
