// The records the lazy layer and the guard keep: tasks, stand-in memory objects with their queue of
// recorded operations, and stand-in streams/events.
#ifndef MGB_RUNTIME_SRC_LAZY_STATE_H
#define MGB_RUNTIME_SRC_LAZY_STATE_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>

#include "mgb/core/gpu.h"

namespace mgb::runtime {

// One GPU task placed by mgbd: static (probes) or lazy (placed at a launch using stand-ins).
struct Task {
  uint64_t id = 0;          // mgbd's task id, also the mgb_task handle
  int device = 0;           // CUDA ordinal of the GPU mgbd chose
  std::string site;         // "file:line" for messages
  bool lazy = false;        // ends when its last bound stand-in is freed (or at exit)
  uint64_t reserved = 0;    // bytes mgbd granted, heap included
  uint64_t heap_bytes = 0;  // the on-device malloc heap counted in `reserved`
  uint64_t allocated = 0;   // bytes really allocated for it
  uint64_t pending = 0;     // bytes reserved for allocations in flight
  int depth = 0;            // static begins (nesting) not yet ended
  size_t objects = 0;       // stand-ins bound to it, and allocations holding it (eager binding)
  // The most of each measure of a launch's demand mgbd was told of (it weighs them together).
  uint64_t told_warps = 0;
  uint32_t told_registers = 0;  // per thread
  uint32_t told_shared = 0;     // bytes per block

  uint64_t Budget() const { return reserved > heap_bytes ? reserved - heap_bytes : 0; }
  // Whether `shape` raises a measure mgbd was told of; if so, it now counts as told.
  bool RaisesTold(const core::LaunchShape &shape) {
    if (shape.warps() <= told_warps && shape.registers_per_thread <= told_registers &&
        shape.shared_bytes_per_block <= told_shared) {
      return false;
    }
    told_warps = std::max(told_warps, shape.warps());
    told_registers = std::max(told_registers, shape.registers_per_thread);
    told_shared = std::max(told_shared, shape.shared_bytes_per_block);
    return true;
  }
};

struct LazyObject;

// One recorded operation on stand-ins, replayed in `seq` order when its objects are bound.
struct LazyOp {
  enum class Kind { kCopyIn, kCopy2DIn, kMemset, kCopyObject };
  uint64_t seq = 0;
  Kind kind = Kind::kCopyIn;
  LazyObject *dst = nullptr;
  size_t dst_offset = 0;
  LazyObject *src = nullptr;  // kCopyObject
  size_t src_offset = 0;
  size_t count = 0;                   // bytes; for kCopy2DIn the row width
  size_t height = 1;                  // kCopy2DIn
  size_t dst_pitch = 0;               // kCopy2DIn
  int value = 0;                      // kMemset
  std::vector<unsigned char> bytes;   // host data captured at call time (kCopyIn, kCopy2DIn)
  std::vector<size_t> standin_words;  // offsets in `bytes` of words that are stand-in addresses
  bool async = false;
  cudaStream_t stream = nullptr;  // as the program passed it (maybe a stand-in stream)
};

enum class ObjectState { kUnbound, kBinding, kBound };

// A piece of the reserved device address range, the unit that is mapped onto a GPU: a large
// allocation has one of its own; small ones are packed into a span of one granule per thread (a
// GPU maps whole granules, 2 MiB on an H100, so objects sharing one bind to one task together).
// The span is mapped when its first object is bound and unmapped when its last object goes.
struct AddressSpan {
  uintptr_t base = 0;
  size_t size = 0;       // a multiple of the mapping granularity
  size_t used = 0;       // bytes handed out to objects (packed spans fill from the start)
  size_t live = 0;       // objects on it that still exist
  bool open = false;     // small allocations may still be packed into it
  bool mapped = false;   // backed by physical memory on `device`
  uint64_t handle = 0;   // the physical memory, when mapped
  int device = -1;       // when mapped
  uint64_t task_id = 0;  // the task its memory is counted in, when mapped
};

// A device allocation made outside any task: an address the program keeps for good, with no
// memory behind it until a launch binds it to a task (its span is then mapped on the task's GPU).
struct LazyObject {
  uintptr_t base = 0;           // the program's pointer, now and after binding
  AddressSpan *span = nullptr;  // where it lives
  size_t size = 0;
  uint64_t seq = 0;  // creation order
  ObjectState state = ObjectState::kUnbound;
  bool freed = false;    // the program freed it; kept while pending ops still read it
  uint64_t task_id = 0;  // when bound
  void *real = nullptr;  // when bound
  std::vector<std::shared_ptr<LazyOp>> ops;  // pending ops touching it, in seq order
  int readers = 0;                           // pending ops of other objects that read it
  std::thread::id owner;                     // the thread that allocated it
};

// A stand-in stream or event: one real handle per device, created where it is first used.
struct LazyHandle {
  bool is_event = false;
  unsigned int flags = 0;
  std::map<int, void *> real;     // device -> cudaStream_t / cudaEvent_t
  int last_recorded_device = -1;  // events: where the latest record happened
  // events: recorded (with this stream) before the recording thread had a GPU from mgbd; the record
  // is made when the thread's next task is placed (see Runtime::EventRecord).
  bool pending = false;
  cudaStream_t pending_stream = nullptr;
};

// A real device allocation libmgb made (guarded, or a bound stand-in's memory).
struct RealAllocation {
  size_t size = 0;
  uint64_t task_id = 0;  // 0: made unmanaged or outside any task
  bool holds_task =
      false;  // counted in its task's `objects` (eager binding): freeing it may end it
};

}  // namespace mgb::runtime

#endif  // MGB_RUNTIME_SRC_LAZY_STATE_H
