// Allocation, copies, sets and symbol copies: guarded inside a task, recorded on stand-ins outside,
// passed straight to CUDA when no stand-in is involved.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "runtime.h"

namespace mgb::runtime {
namespace {

constexpr size_t kPitchAlignment = 512;  // what cudaMallocPitch uses on current GPUs

size_t PitchFor(size_t width) {
  return (std::max<size_t>(width, 1) + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
}

bool Fits(size_t offset, size_t count, size_t size) {
  return offset <= size && count <= size - offset;
}

// An op to record: `count` bytes written at `offset` in `dst`, on `stream` (none: synchronous).
std::shared_ptr<LazyOp> NewOp(LazyOp::Kind kind, LazyObject *dst, size_t offset, size_t count,
                              std::optional<cudaStream_t> stream) {
  auto op = std::make_shared<LazyOp>();
  op->kind = kind;
  op->dst = dst;
  op->dst_offset = offset;
  op->count = count;
  op->async = stream.has_value();
  op->stream = stream.value_or(nullptr);
  return op;
}

}  // namespace

cudaError_t Runtime::Malloc(void **ptr, size_t bytes) {
  if (!session_.Managed()) return api_.Malloc(ptr, bytes);
  if (ptr != nullptr && bytes == 0) {  // as CUDA: success, and a null pointer (no stand-in)
    *ptr = nullptr;
    return cudaSuccess;
  }
  // Outside a task the address is reserved now and mapped when a launch binds it; without CUDA's
  // virtual memory management the allocation is real at once instead (eager binding).
  if (CurrentTaskId() == 0 && !Eager()) LazyAddressesAvailable();  // if not: Eager() from now on
  if (uint64_t task = AllocationTask(bytes)) {
    cudaError_t error = GuardedMalloc(task, ptr, bytes);
    if (error == cudaSuccess) HoldTask(*ptr);
    return error;
  }
  if (Eager()) return api_.Malloc(ptr, bytes);  // eager, but no task could be had
  if (ptr == nullptr) return cudaErrorInvalidValue;
  std::lock_guard lock(mu_);
  LazyObject *object = NewObjectLocked(bytes);
  if (object == nullptr) {
    std::fprintf(stderr, "mgb: out of reserved device addresses allocating %zu bytes\n", bytes);
    return cudaErrorMemoryAllocation;
  }
  *ptr = reinterpret_cast<void *>(object->base);
  return cudaSuccess;
}

cudaError_t Runtime::MallocPitch(void **ptr, size_t *pitch, size_t width, size_t height) {
  if (!session_.Managed()) return api_.MallocPitch(ptr, pitch, width, height);
  if (ptr == nullptr || pitch == nullptr) return cudaErrorInvalidValue;
  if (uint64_t task = AllocationTask(PitchFor(width) * height)) {
    uint64_t estimate = PitchFor(width) * height;
    switch (ReserveInTask(task, estimate, /*allocation_may_fail=*/true)) {
      case Reserve::kRefused: return cudaErrorMemoryAllocation;
      case Reserve::kUnmanaged: return api_.MallocPitch(ptr, pitch, width, height);
      case Reserve::kDone: break;
    }
    cudaError_t error = api_.MallocPitch(ptr, pitch, width, height);
    uint64_t allocated = error == cudaSuccess ? *pitch * height : 0;
    CommitInTask(task, estimate, allocated);
    if (error == cudaSuccess) {
      {
        std::lock_guard lock(mu_);
        reals_[reinterpret_cast<uintptr_t>(*ptr)] = RealAllocation{allocated, task};
      }
      HoldTask(*ptr);
    }
    return error;
  }
  // Outside a task the pitch is chosen now (the program indexes with it) and kept at replay,
  // which allocates pitch * height linearly.
  *pitch = PitchFor(width);
  return Malloc(ptr, *pitch * height);
}

cudaError_t Runtime::MallocManaged(void **ptr, size_t bytes, unsigned int flags) {
  if (!session_.Managed()) return api_.MallocManaged(ptr, bytes, flags);
  // Outside a task managed memory is real at once (the host may touch it right away): it is
  // bound eagerly, to the process task, which it keeps open until it is freed.
  uint64_t task = AllocationTask(bytes);
  const bool eager = task == 0;
  if (eager) task = EagerTask(bytes, "cudaMallocManaged");
  if (task == 0) return api_.MallocManaged(ptr, bytes, flags);
  switch (ReserveInTask(task, bytes, /*allocation_may_fail=*/true)) {
    case Reserve::kRefused: return cudaErrorMemoryAllocation;
    case Reserve::kUnmanaged: return api_.MallocManaged(ptr, bytes, flags);
    case Reserve::kDone: break;
  }
  cudaError_t error = api_.MallocManaged(ptr, bytes, flags);
  CommitInTask(task, bytes, error == cudaSuccess ? bytes : 0);
  if (error == cudaSuccess) {
    {
      std::lock_guard lock(mu_);
      reals_[reinterpret_cast<uintptr_t>(*ptr)] = RealAllocation{bytes, task};
    }
    HoldTask(*ptr, eager);
  }
  return error;
}

cudaError_t Runtime::Free(void *ptr) {
  if (!session_.Managed() || !IsStandIn(ptr)) return ReleaseReal(ptr);
  uint64_t task_id = 0;
  std::optional<AddressSpan> dead;
  {
    std::unique_lock lock(mu_);
    Resolved resolved = ResolveLocked(lock, ptr);
    LazyObject *object = resolved.object;
    if (object == nullptr || object->freed || resolved.offset != 0) return cudaErrorInvalidValue;
    object->freed = true;
    if (object->state == ObjectState::kUnbound) {
      DropIfDeadLocked(object);
      return cudaSuccess;
    }
    task_id = object->task_id;
    dead = ForgetObjectLocked(object);
  }
  if (dead) DisposeSpan(*dead);
  cudaError_t error = cudaSuccess;
  bool end_task = false;
  {
    std::lock_guard lock(mu_);
    if (auto it = tasks_.find(task_id); it != tasks_.end()) {
      Task &task = *it->second;
      end_task = --task.objects == 0 && task.lazy && task.depth == 0;
    }
  }
  if (end_task) FinishTask(task_id);  // a lazy task ends with its last object
  return error;
}

cudaError_t Runtime::MemcpyPeer(void *dst, int dst_device, const void *src, int src_device,
                                size_t count, std::optional<cudaStream_t> stream) {
  if (!session_.Managed()) {
    return stream ? api_.MemcpyPeerAsync(dst, dst_device, src, src_device, count, *stream)
                  : api_.MemcpyPeer(dst, dst_device, src, src_device, count);
  }
  if (cudaError_t error = CheckDevice(dst_device); error != cudaSuccess) return error;
  if (cudaError_t error = CheckDevice(src_device); error != cudaSuccess) return error;
  return Memcpy(dst, src, count, cudaMemcpyDeviceToDevice, stream);
}

cudaError_t Runtime::Memcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind,
                            std::optional<cudaStream_t> stream) {
  auto plain = [&](void *d, const void *s, int device) {
    return stream ? api_.MemcpyAsync(d, s, count, kind, StreamOn(*stream, device))
                  : api_.Memcpy(d, s, count, kind);
  };
  if (!session_.Managed()) return plain(dst, src, -1);
  // Host bytes going into real device memory may hold lazy addresses (an array of device pointers
  // for a batched library call): those buffers are bound first, to the destination's task, so
  // that the device code reading the array finds them mapped.
  auto direct = [&](void *d, const void *s, int device) {
    if (kind == cudaMemcpyHostToDevice) {
      uint64_t owner;
      {
        std::lock_guard lock(mu_);
        owner = RealOwnerLocked(reinterpret_cast<uintptr_t>(d));
      }
      BindAddressesIn(s, count, owner);
    }
    return plain(d, s, device);
  };
  bool dst_standin = IsStandIn(dst), src_standin = IsStandIn(src);
  if (!dst_standin && !src_standin) return direct(dst, src, CurrentDevice());
  {
    std::unique_lock lock(mu_);
    Resolved d = dst_standin ? ResolveLocked(lock, dst) : Resolved{};
    Resolved s = src_standin ? ResolveLocked(lock, src) : Resolved{};
    if ((dst_standin && (d.object == nullptr || d.object->freed)) ||
        (src_standin && (s.object == nullptr || s.object->freed))) {
      return cudaErrorInvalidValue;
    }
    if ((d.object && !Fits(d.offset, count, d.object->size)) ||
        (s.object && !Fits(s.offset, count, s.object->size))) {
      return cudaErrorInvalidValue;
    }
    bool dst_unbound = d.object && d.object->state == ObjectState::kUnbound;
    bool src_host =
        !src_standin &&
        (kind == cudaMemcpyHostToDevice ||
         (kind == cudaMemcpyDefault && RealOwnerLocked(reinterpret_cast<uintptr_t>(src)) == 0));
    if (dst_unbound && ((src_host && MayCaptureLocked(count)) ||
                        (s.object && s.object->state == ObjectState::kUnbound))) {
      auto op = NewOp(src_host ? LazyOp::Kind::kCopyIn : LazyOp::Kind::kCopyObject, d.object,
                      d.offset, count, stream);
      if (src_host) {  // captured now: later host writes must not change what is replayed
        op->bytes.assign(static_cast<const unsigned char *>(src),
                         static_cast<const unsigned char *>(src) + count);
        for (size_t offset = 0; offset + sizeof(uintptr_t) <= count; offset += sizeof(uintptr_t)) {
          uintptr_t word;
          std::memcpy(&word, op->bytes.data() + offset, sizeof word);
          if (memory_.Contains(word)) op->standin_words.push_back(offset);
        }
      } else {
        op->src = s.object;
        op->src_offset = s.offset;
      }
      RecordLocked(std::move(op));
      return cudaSuccess;
    }
  }
  return WithRealPointers({dst, src}, "cudaMemcpy",
                          [&](const std::vector<void *> &real, int device) {
                            return direct(real[0], real[1], device);
                          });
}

cudaError_t Runtime::Memcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, cudaMemcpyKind kind) {
  auto direct = [&](void *d, const void *s) {
    return api_.Memcpy2D(d, dpitch, s, spitch, width, height, kind);
  };
  if (!session_.Managed()) return direct(dst, src);
  if (!IsStandIn(dst) && !IsStandIn(src)) return direct(dst, src);
  if (IsStandIn(dst) && !IsStandIn(src) &&
      (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDefault)) {
    std::unique_lock lock(mu_);
    Resolved d = ResolveLocked(lock, dst);
    if (d.object == nullptr || d.object->freed || width > dpitch || width > spitch) {
      return cudaErrorInvalidValue;
    }
    if (height > 0 && !Fits(d.offset, dpitch * (height - 1) + width, d.object->size)) {
      return cudaErrorInvalidValue;
    }
    bool src_host =
        kind == cudaMemcpyHostToDevice || RealOwnerLocked(reinterpret_cast<uintptr_t>(src)) == 0;
    if (d.object->state == ObjectState::kUnbound && src_host && MayCaptureLocked(width * height)) {
      auto op = NewOp(LazyOp::Kind::kCopy2DIn, d.object, d.offset, width, std::nullopt);
      op->height = height;
      op->dst_pitch = dpitch;
      op->bytes.resize(width * height);
      for (size_t row = 0; row < height; ++row) {  // packed: the source pitch is not needed later
        std::memcpy(op->bytes.data() + row * width,
                    static_cast<const unsigned char *>(src) + row * spitch, width);
      }
      RecordLocked(std::move(op));
      return cudaSuccess;
    }
  }
  return WithRealPointers({dst, src}, "cudaMemcpy2D", [&](const std::vector<void *> &real, int) {
    return direct(real[0], real[1]);
  });
}

cudaError_t Runtime::Memset(void *ptr, int value, size_t count,
                            std::optional<cudaStream_t> stream) {
  auto direct = [&](void *p, int device) {
    return stream ? api_.MemsetAsync(p, value, count, StreamOn(*stream, device))
                  : api_.Memset(p, value, count);
  };
  if (!session_.Managed()) return direct(ptr, -1);
  if (!IsStandIn(ptr)) return direct(ptr, CurrentDevice());
  {
    std::unique_lock lock(mu_);
    Resolved resolved = ResolveLocked(lock, ptr);
    if (resolved.object == nullptr || resolved.object->freed ||
        !Fits(resolved.offset, count, resolved.object->size)) {
      return cudaErrorInvalidValue;
    }
    if (resolved.object->state == ObjectState::kUnbound) {
      auto op = NewOp(LazyOp::Kind::kMemset, resolved.object, resolved.offset, count, stream);
      op->value = value;
      RecordLocked(std::move(op));
      return cudaSuccess;
    }
  }
  return WithRealPointers({ptr}, "cudaMemset", [&](const std::vector<void *> &real, int device) {
    return direct(real[0], device);
  });
}

// __constant__ / __device__ data: per device in CUDA, one value for the program. Writes from host
// memory are kept (latest bytes per range) and applied to every GPU a task of the process lands
// on; a write made now also goes to every GPU already in use.
cudaError_t Runtime::MemcpyToSymbol(const void *symbol, const void *src, size_t count,
                                    size_t offset, cudaMemcpyKind kind) {
  if (!session_.Managed()) return api_.MemcpyToSymbol(symbol, src, count, offset, kind);
  bool from_host = !IsStandIn(src) && kind != cudaMemcpyDeviceToDevice;
  if (from_host && kind == cudaMemcpyDefault) {
    std::lock_guard lock(mu_);
    from_host = RealOwnerLocked(reinterpret_cast<uintptr_t>(src)) == 0;
  }
  if (!from_host) {  // device data: copied now on the device holding it, not recorded
    return WithRealPointers({src}, "cudaMemcpyToSymbol", [&](const std::vector<void *> &real, int) {
      return api_.MemcpyToSymbol(symbol, real[0], count, offset, kind);
    });
  }
  std::lock_guard lock(device_mu_);
  std::erase_if(symbol_writes_, [&](const SymbolWrite &old) {
    return old.symbol == symbol && old.offset >= offset &&
           old.offset + old.bytes.size() <= offset + count;
  });
  const auto *bytes = static_cast<const unsigned char *>(src);
  symbol_writes_.push_back(SymbolWrite{symbol, offset, {bytes, bytes + count}});
  int current = CurrentDevice();
  cudaError_t result = cudaSuccess;
  for (int device : prepared_devices_) {
    if (device != current) api_.SetDevice(device);
    cudaError_t error = api_.MemcpyToSymbol(symbol, src, count, offset, kind);
    if (device == current || result == cudaSuccess) result = error;
    if (device != current) api_.SetDevice(current);
  }
  return result;
}

cudaError_t Runtime::MemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
                                      cudaMemcpyKind kind) {
  if (!session_.Managed()) return api_.MemcpyFromSymbol(dst, symbol, count, offset, kind);
  // Read it where the program's data is: the current task's GPU, or the thread's current device
  // (prepared first, so that recorded writes are there).
  if (CurrentTaskId() == 0 && !IsStandIn(dst)) PrepareDevice(CurrentDevice());
  return WithRealPointers({dst}, "cudaMemcpyFromSymbol", [&](const std::vector<void *> &real, int) {
    return api_.MemcpyFromSymbol(real[0], symbol, count, offset, kind);
  });
}

}  // namespace mgb::runtime
