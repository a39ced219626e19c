// Eager binding. A program holding code mgb cannot see (a translation unit mgb-nvcc compiled as
// written because Clang could not parse it, or MGB_EAGER=1) may hand any device pointer to that
// code, so from then on no stand-in may be handed out: every allocation is made on a GPU at
// once, and all of them, with every static task, belong to one task of the process, placed by
// the first of them and grown by the guard. Coarser than a task per region; never wrong.
#include <atomic>
#include <cstdio>

#include "runtime.h"

namespace mgb::runtime {

namespace {
// Constant-initialised: set by static constructors of the program, possibly before libmgb's own
// dynamic initialisation has run.
std::atomic<bool> unseen_code_in_process{false};
}  // namespace

void Runtime::NoteUnseenCodeInProcess() {
  unseen_code_in_process.store(true, std::memory_order_relaxed);
}

std::atomic<const Runtime *> Runtime::process_runtime_{nullptr};

bool Runtime::Eager() const {
  return eager_.load(std::memory_order_relaxed) ||
         (this == process_runtime_.load(std::memory_order_relaxed) &&
          unseen_code_in_process.load(std::memory_order_relaxed));
}

void Runtime::NoteUnseenCode(const char *file) {
  // Silent at run time: mgb-nvcc said so loudly when it compiled the file as written, and a
  // managed program's output must stay its own.
  (void)file;
  eager_.store(true, std::memory_order_relaxed);
}

uint64_t Runtime::ProcessTask(uint64_t bytes, const LaunchShape &shape, const std::string &site) {
  std::lock_guard start(process_task_mu_);
  {
    std::lock_guard lock(mu_);
    if (process_task_ != 0 && tasks_.count(process_task_)) return process_task_;
    process_task_ = 0;
  }
  uint64_t id = StartTask(bytes, shape, site, /*lazy=*/true);
  if (id == 0) return 0;
  PlacedOn(DeviceOfTask(id));
  std::lock_guard lock(mu_);
  process_task_ = id;
  return id;
}

uint64_t Runtime::EagerTask(uint64_t bytes, const std::string &site) {
  uint64_t task = ProcessTask(bytes, LaunchShape{}, site);
  int device = DeviceOfTask(task);
  if (device >= 0 && device != CurrentDevice()) api_.SetDevice(device);
  return task;
}

uint64_t Runtime::AllocationTask(uint64_t bytes) {
  if (uint64_t task = CurrentTaskId()) return task;
  return Eager() ? EagerTask(bytes, "eager allocation") : 0;
}

void Runtime::HoldTask(void *real, bool always) {
  if (!always && !Eager()) return;
  std::lock_guard lock(mu_);
  auto it = reals_.find(reinterpret_cast<uintptr_t>(real));
  if (it == reals_.end() || it->second.holds_task) return;
  auto task = tasks_.find(it->second.task_id);
  if (task == tasks_.end()) return;
  it->second.holds_task = true;
  ++task->second->objects;
}

}  // namespace mgb::runtime
