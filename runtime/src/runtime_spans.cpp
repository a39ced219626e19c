// Spans: the pieces of the reserved device address range that are mapped onto a GPU. An object's
// address is fixed at its allocation; binding maps its span on the task's GPU, migration remaps
// it onto another GPU, and the span's memory goes when its last object does (docs/runtime.md,
// "Addresses").
#include <algorithm>
#include <cstdio>

#include "runtime.h"

namespace mgb::runtime {

bool Runtime::LazyAddressesAvailable() {
  if (memory_.Reserved()) return true;
  if (!eager_.exchange(true) && session_.Config().trace) {
    std::fprintf(stderr,
                 "mgb-trace: CUDA virtual memory management is unavailable: every allocation is "
                 "bound eagerly\n");
  }
  return false;
}

AddressSpan *Runtime::SpanForLocked(size_t bytes, size_t *offset) {
  const size_t granule = memory_.Alignment();
  const size_t piece = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;  // cudaMalloc's alignment
  const bool small = piece <= granule / 2;
  // Mapped memory on each side of what the program asked for, part of the span (mapped, moved and
  // counted with it): a read just past a buffer's ends (Rodinia srad_v2 reads a row before and a
  // row after its image) finds memory, as it does next to cudaMalloc's allocations, instead of an
  // unmapped hole. Measured on 2 x H100 without it: every srad_v2 job's kernel faulted.
  const size_t margin = session_.Config().span_margin_granules * granule;
  if (small) {
    auto open = open_spans_.find(std::this_thread::get_id());
    if (open != open_spans_.end() && open->second->size - margin - open->second->used >= piece) {
      AddressSpan *span = open->second;
      *offset = span->used;
      span->used += piece;
      ++span->live;
      return span;
    }
  }
  const size_t payload = memory_.Rounded(small ? granule : bytes);
  const size_t size = payload + 2 * margin;
  uintptr_t base = memory_.Allocate(size);
  if (base == 0) return nullptr;
  auto span = std::make_unique<AddressSpan>();
  span->base = base;
  span->size = size;
  span->used = margin + (small ? piece : payload);
  span->live = 1;
  span->open = small;
  AddressSpan *raw = span.get();
  spans_[base] = std::move(span);
  if (small) open_spans_[std::this_thread::get_id()] = raw;  // the previous one stays as it is
  *offset = margin;
  return raw;
}

void Runtime::CloseSpanLocked(AddressSpan *span) {
  span->open = false;
  for (auto it = open_spans_.begin(); it != open_spans_.end(); ++it) {
    if (it->second == span) {
      open_spans_.erase(it);
      return;
    }
  }
}

std::vector<LazyObject *> Runtime::ObjectsOnLocked(const AddressSpan &span) {
  std::vector<LazyObject *> on;
  for (auto it = objects_.lower_bound(span.base);
       it != objects_.end() && it->first < span.base + span.size; ++it) {
    on.push_back(it->second.get());
  }
  return on;
}

std::optional<AddressSpan> Runtime::ForgetObjectLocked(LazyObject *object) {
  AddressSpan *span = object->span;
  objects_.erase(object->base);  // `object` is gone from here on
  if (span == nullptr || --span->live > 0) return std::nullopt;
  CloseSpanLocked(span);
  AddressSpan dead = *span;
  spans_.erase(dead.base);
  return dead;
}

void Runtime::DisposeSpan(const AddressSpan &span) {
  if (span.mapped) {
    // As cudaFree does: work still using the memory finishes before it goes.
    int previous = CurrentDevice();
    if (previous != span.device) api_.SetDevice(span.device);
    api_.DeviceSynchronize();
    api_.UnmapPhysical(span.base, span.size);
    api_.ReleasePhysical(span.handle);
    if (previous != span.device && previous >= 0) api_.SetDevice(previous);
    if (span.task_id != 0) ReleaseFromTask(span.task_id, span.size);
  }
  memory_.Release(span.base, span.size);
}

cudaError_t Runtime::MapSpan(AddressSpan *span, int device, uint64_t task_id) {
  uint64_t handle = 0;
  cudaError_t error = api_.CreatePhysical(span->size, device, &handle);
  if (error != cudaSuccess) return error;
  error = api_.MapPhysical(span->base, span->size, handle, device);
  if (error != cudaSuccess) {
    api_.ReleasePhysical(handle);
    return error;
  }
  std::lock_guard lock(mu_);
  span->mapped = true;
  span->handle = handle;
  span->device = device;
  span->task_id = task_id;
  return cudaSuccess;
}

cudaError_t Runtime::RemapSpan(AddressSpan *span, int device) {
  // The data goes through a second range mapped on the new GPU, then the span's own addresses
  // are mapped onto the new memory: pointers the program holds stay valid.
  const int from = span->device;
  uint64_t handle = 0;
  uintptr_t staging = 0;
  cudaError_t error = api_.CreatePhysical(span->size, device, &handle);
  if (error != cudaSuccess) return error;
  error = api_.ReserveAddresses(span->size, memory_.Alignment(), &staging);
  if (error == cudaSuccess) error = api_.MapPhysical(staging, span->size, handle, device);
  if (error == cudaSuccess) {
    error = api_.MemcpyPeer(reinterpret_cast<void *>(staging), device,
                            reinterpret_cast<const void *>(span->base), from, span->size);
    // cudaMemcpyPeer returns before the copy is done: both GPUs finish it before any unmap
    // (measured on two H100s: unmapping at once lost the data and left a sticky launch failure).
    if (error == cudaSuccess && from >= 0 && from != device) {
      api_.SetDevice(from);
      error = api_.DeviceSynchronize();
      api_.SetDevice(device);
    }
    if (error == cudaSuccess) error = api_.DeviceSynchronize();
    api_.UnmapPhysical(staging, span->size);
  }
  if (staging != 0) api_.FreeAddresses(staging, span->size);
  if (error == cudaSuccess) {
    api_.UnmapPhysical(span->base, span->size);
    error = api_.MapPhysical(span->base, span->size, handle, device);
    if (error == cudaSuccess) {
      api_.ReleasePhysical(span->handle);
    } else {  // the old memory, data and all, stays where it was
      api_.MapPhysical(span->base, span->size, span->handle, from);
    }
  }
  if (error != cudaSuccess) {
    api_.ReleasePhysical(handle);
    return error;
  }
  std::lock_guard lock(mu_);
  span->handle = handle;
  span->device = device;
  return cudaSuccess;
}

}  // namespace mgb::runtime
