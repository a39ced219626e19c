// The lazy layer: stand-in objects, their recorded operations, and binding them to a task at the
// launch that uses them (replay on the chosen GPU, then real addresses for the kernel).
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "runtime.h"

namespace mgb::runtime {

Runtime::Resolved Runtime::ResolveLocked(std::unique_lock<std::mutex> &lock, const void *ptr) {
  uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  for (;;) {
    auto it = objects_.upper_bound(address);
    if (it == objects_.begin()) return {};
    LazyObject *object = std::prev(it)->second.get();
    if (address >= object->base + std::max<size_t>(object->size, 1)) return {};
    if (object->state == ObjectState::kBinding) {  // another thread is placing it: wait
      objects_cv_.wait(lock);
      continue;
    }
    return {object, address - object->base};
  }
}

LazyObject *Runtime::NewObjectLocked(size_t bytes) {
  size_t offset = 0;
  AddressSpan *span = SpanForLocked(bytes, &offset);
  if (span == nullptr) return nullptr;
  const uintptr_t base = span->base + offset;
  auto object = std::make_unique<LazyObject>();
  object->base = base;
  object->span = span;
  object->size = bytes;
  object->seq = next_seq_++;
  object->owner = std::this_thread::get_id();
  LazyObject *raw = object.get();
  objects_[base] = std::move(object);
  return raw;
}

bool Runtime::MayCaptureLocked(size_t bytes) const {
  return captured_bytes_ + bytes <= session_.Config().capture_limit_bytes;
}

void Runtime::RecordLocked(std::shared_ptr<LazyOp> op) {
  op->seq = next_seq_++;
  captured_bytes_ += op->bytes.size();
  op->dst->ops.push_back(op);
  if (op->src != nullptr && op->src != op->dst) {
    op->src->ops.push_back(op);
    ++op->src->readers;
  }
}

void Runtime::DropIfDeadLocked(LazyObject *object) {
  if (!object->freed || object->readers > 0 || object->state != ObjectState::kUnbound) return;
  std::vector<LazyObject *> sources;
  for (const auto &op : object->ops) {
    if (op->dst == object) captured_bytes_ -= op->bytes.size();
    if (op->dst == object && op->src != nullptr && op->src != object) {
      // The copy into this object dies with it: its source must not replay it later.
      auto &theirs = op->src->ops;
      theirs.erase(std::remove(theirs.begin(), theirs.end(), op), theirs.end());
      sources.push_back(op->src);
    }
  }
  if (std::optional<AddressSpan> dead = ForgetObjectLocked(object)) DisposeSpan(*dead);  // unmapped
  for (LazyObject *source : sources) {
    --source->readers;
    DropIfDeadLocked(source);
  }
}

std::optional<uintptr_t> Runtime::TranslateLocked(uintptr_t address) {
  auto it = objects_.upper_bound(address);
  if (it == objects_.begin()) return std::nullopt;
  LazyObject *object = std::prev(it)->second.get();
  if (address >= object->base + std::max<size_t>(object->size, 1)) return std::nullopt;
  if (object->real == nullptr) return std::nullopt;
  return reinterpret_cast<uintptr_t>(object->real) + (address - object->base);
}

uint64_t Runtime::RealOwnerLocked(uintptr_t address) const {
  if (memory_.Contains(address)) {  // a lazy buffer: its task once bound
    auto object = objects_.upper_bound(address);
    if (object == objects_.begin()) return 0;
    const LazyObject &found = *std::prev(object)->second;
    const bool inside = address < found.base + std::max<size_t>(found.size, 1);
    return inside && found.state == ObjectState::kBound ? found.task_id : 0;
  }
  auto it = reals_.upper_bound(address);
  if (it == reals_.begin()) return 0;
  --it;
  return address < it->first + std::max<size_t>(it->second.size, 1) ? it->second.task_id : 0;
}

std::vector<uintptr_t> Runtime::StandInsIn(const void *bytes, size_t size) const {
  std::vector<uintptr_t> found;
  const auto *start = static_cast<const unsigned char *>(bytes);
  for (size_t offset = 0; offset + sizeof(uintptr_t) <= size; offset += sizeof(uintptr_t)) {
    uintptr_t word;
    std::memcpy(&word, start + offset, sizeof word);
    if (memory_.Contains(word)) found.push_back(word);
  }
  return found;
}

// ---- binding

cudaError_t Runtime::Bind(std::vector<uintptr_t> standins, const LaunchShape &shape,
                          const std::string &site, uint64_t preferred_task, bool library_call,
                          const void *kernel) {
  std::lock_guard bind_lock(bind_mu_);  // only Bind sets kBinding: Resolve below never waits
  std::unique_lock lock(mu_);
  // The closure: the objects named, and every unbound object their pending ops reach.
  std::vector<LazyObject *> named;
  std::vector<LazyObject *> fresh;
  std::set<LazyObject *> seen;
  std::vector<LazyObject *> work;
  for (uintptr_t address : standins) {
    Resolved resolved = ResolveLocked(lock, reinterpret_cast<const void *>(address));
    if (resolved.object == nullptr || !seen.insert(resolved.object).second) continue;
    if (resolved.object->freed) {
      std::fprintf(stderr, "mgb: %s uses device memory that was already freed\n", site.c_str());
      return cudaErrorInvalidValue;
    }
    named.push_back(resolved.object);
    work.push_back(resolved.object);
  }
  // Every other object this thread allocated and has not bound yet joins too. Programs allocate
  // their buffers up front and touch them over several launches; binding them one launch at a time
  // would grow the task in steps, and two such tasks on one GPU, each holding part of its memory
  // while waiting to grow, can wait for each other forever (seen on H200: two 70-90 GB jobs).
  if (!named.empty()) {
    for (auto &[base, object] : objects_) {
      if (object->state == ObjectState::kUnbound && !object->freed &&
          object->owner == std::this_thread::get_id() && seen.insert(object.get()).second) {
        work.push_back(object.get());
      }
    }
  }
  while (!work.empty()) {
    LazyObject *object = work.back();
    work.pop_back();
    if (object->state != ObjectState::kUnbound) continue;
    fresh.push_back(object);
    // Objects sharing its span share its memory: they bind to the same task.
    for (LazyObject *mate : ObjectsOnLocked(*object->span)) {
      if (mate->state == ObjectState::kUnbound && seen.insert(mate).second) work.push_back(mate);
    }
    for (const auto &op : object->ops) {
      std::vector<LazyObject *> reached = {op->dst, op->src};
      for (size_t offset : op->standin_words) {
        uintptr_t word;
        std::memcpy(&word, op->bytes.data() + offset, sizeof word);
        reached.push_back(ResolveLocked(lock, reinterpret_cast<const void *>(word)).object);
      }
      for (LazyObject *next : reached) {
        if (next != nullptr && next->state == ObjectState::kUnbound && seen.insert(next).second) {
          work.push_back(next);
        }
      }
    }
  }
  // The task: the one asked for, else this thread's static task, else that of a bound object.
  uint64_t target = tasks_.count(preferred_task) ? preferred_task : 0;
  if (target == 0 && tasks_.count(CurrentTaskId())) target = CurrentTaskId();
  for (LazyObject *object : named) {
    if (target == 0 && object->state == ObjectState::kBound) target = object->task_id;
  }
  if (!fresh.empty() && Thread().captures > 0) {
    // Binding allocates and replays copies, which a stream capture forbids (it would be
    // invalidated): what a capture uses is bound when it begins (StreamBeginCapture).
    std::fprintf(stderr,
                 "mgb: %s: device memory first used inside a CUDA graph capture; it must "
                 "be used or allocated by this thread before cudaStreamBeginCapture\n",
                 site.c_str());
    return cudaErrorStreamCaptureUnsupported;
  }
  // Bound to another task on another GPU: migrate (see docs/runtime.md). Memory of another
  // task on the same GPU is reachable as it is: it stays where it is, in its own task.
  std::vector<LazyObject *> movers;  // one object per span: the whole span moves
  std::set<AddressSpan *> moving;
  auto device_of = [&](uint64_t task) {
    auto it = tasks_.find(task);
    return it == tasks_.end() ? -1 : it->second->device;
  };
  for (LazyObject *object : named) {
    if (object->state == ObjectState::kBound && object->task_id != target &&
        (target == 0 || device_of(object->task_id) != device_of(target)) &&
        moving.insert(object->span).second) {
      movers.push_back(object);
    }
  }
  // The memory to reserve: every span of the fresh objects, none of which is mapped yet.
  uint64_t fresh_bytes = 0;
  std::set<AddressSpan *> fresh_spans;
  std::vector<std::shared_ptr<LazyOp>> ops;
  for (LazyObject *object : fresh) {
    object->state = ObjectState::kBinding;
    if (fresh_spans.insert(object->span).second) fresh_bytes += object->span->size;
    ops.insert(ops.end(), object->ops.begin(), object->ops.end());
  }
  for (AddressSpan *span : fresh_spans) CloseSpanLocked(span);  // no more packing once bound
  std::sort(ops.begin(), ops.end(), [](const auto &a, const auto &b) { return a->seq < b->seq; });
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  for (const auto &op : ops) captured_bytes_ -= op->bytes.size();  // replayed below, then dropped
  std::sort(fresh.begin(), fresh.end(),
            [](const LazyObject *a, const LazyObject *b) { return a->seq < b->seq; });
  lock.unlock();

  const bool started = target == 0 && !fresh.empty();
  if (started) target = StartTask(fresh_bytes, shape, site, /*lazy=*/true, library_call);
  if (target != 0 && !fresh.empty() && ReserveInTask(target, fresh_bytes) != Reserve::kDone) {
    target = 0;
  }
  int device = DeviceOfTask(target);
  if (device >= 0) api_.SetDevice(device);
  cudaError_t error = cudaSuccess;
  for (LazyObject *object : movers) {
    if (error == cudaSuccess && target != 0) error = Migrate(object, target);
  }
  cudaError_t replayed = Materialize(target, fresh, ops);
  if (error == cudaSuccess) error = replayed;
  if (started && target != 0) {  // a task none of whose memory could be made must not linger
    lock.lock();
    auto it = tasks_.find(target);
    const bool empty = it != tasks_.end() && it->second->objects == 0;
    lock.unlock();
    if (empty) {
      FinishTask(target);
      target = 0;
    }
  }
  if (device >= 0) PlacedOn(device);
  if (session_.Config().trace) {
    std::fprintf(stderr,
                 "mgb-trace: %s binds %zu named and %zu new objects (%zu moved) to task "
                 "%llu on device %d%s\n",
                 site.c_str(), named.size(), fresh.size(), movers.size(),
                 static_cast<unsigned long long>(target), device, started ? " (new task)" : "");
  }
  if (target != 0) Thread().last_prepared = target;
  // On the task's GPU now: the kernel's registers and shared memory, if not known before.
  if (target != 0 && error == cudaSuccess) TellLaunch(target, WithResources(shape, kernel));
  return error;
}

cudaError_t Runtime::Materialize(uint64_t task_id, const std::vector<LazyObject *> &fresh,
                                 const std::vector<std::shared_ptr<LazyOp>> &ops) {
  cudaError_t error = cudaSuccess;
  uint64_t reserved = 0, allocated = 0;
  int device = task_id != 0 ? DeviceOfTask(task_id) : CurrentDevice();
  // Each span is mapped on the task's GPU once; its objects' addresses become real where they are.
  std::set<AddressSpan *> spans;
  for (LazyObject *object : fresh) {
    AddressSpan *span = object->span;
    if (spans.insert(span).second) {
      reserved += span->size;
      if (error == cudaSuccess && !span->mapped) {
        error = device < 0 ? cudaErrorNoDevice : MapSpan(span, device, task_id);
        if (error == cudaSuccess) allocated += span->size;
      }
    }
    std::lock_guard lock(mu_);
    if (!span->mapped) continue;
    object->real = reinterpret_cast<void *>(object->base);
    object->task_id = task_id;
    if (auto it = tasks_.find(task_id); it != tasks_.end()) ++it->second->objects;
  }
  CommitInTask(task_id, reserved, allocated);
  std::set<cudaStream_t> streams;
  for (const auto &op : ops) {
    if (error != cudaSuccess) break;
    char *dst = static_cast<char *>(op->dst->real) + op->dst_offset;
    cudaStream_t stream = op->async ? StreamOn(op->stream, device) : nullptr;
    if (op->async) streams.insert(stream);
    switch (op->kind) {
      case LazyOp::Kind::kCopyIn:  // lazy addresses in the bytes are real: copied as they are
        error = op->async ? api_.MemcpyAsync(dst, op->bytes.data(), op->count,
                                             cudaMemcpyHostToDevice, stream)
                          : api_.Memcpy(dst, op->bytes.data(), op->count, cudaMemcpyHostToDevice);
        break;
      case LazyOp::Kind::kCopy2DIn:
        error = api_.Memcpy2D(dst, op->dst_pitch, op->bytes.data(), op->count, op->count,
                              op->height, cudaMemcpyHostToDevice);
        break;
      case LazyOp::Kind::kMemset:
        error = op->async ? api_.MemsetAsync(dst, op->value, op->count, stream)
                          : api_.Memset(dst, op->value, op->count);
        break;
      case LazyOp::Kind::kCopyObject: {
        const char *src = static_cast<const char *>(op->src->real) + op->src_offset;
        error = op->async ? api_.MemcpyAsync(dst, src, op->count, cudaMemcpyDeviceToDevice, stream)
                          : api_.Memcpy(dst, src, op->count, cudaMemcpyDeviceToDevice);
        break;
      }
    }
  }
  // Captured host bytes must outlive the asynchronous copies reading them.
  for (cudaStream_t stream : streams) api_.StreamSynchronize(stream);

  // Objects the program freed before binding (kept for the ops that read them) go now.
  std::vector<AddressSpan> dead;
  {
    std::lock_guard lock(mu_);
    for (LazyObject *object : fresh) {
      object->ops.clear();
      object->readers = 0;
      object->state = object->real != nullptr ? ObjectState::kBound : ObjectState::kUnbound;
    }
    for (LazyObject *object : fresh) {
      if (object->freed && object->real != nullptr) {
        if (auto it = tasks_.find(task_id); it != tasks_.end()) --it->second->objects;
        if (std::optional<AddressSpan> span = ForgetObjectLocked(object)) dead.push_back(*span);
      }
    }
  }
  objects_cv_.notify_all();
  for (const AddressSpan &span : dead) DisposeSpan(span);
  return error;
}

cudaError_t Runtime::Migrate(LazyObject *object, uint64_t task_id) {
  // The object's whole span moves, with every object on it (they share its memory).
  AddressSpan *span;
  std::vector<LazyObject *> on;
  uint64_t from_task;
  {
    std::lock_guard lock(mu_);
    span = object->span;
    from_task = span->task_id;
    on = ObjectsOnLocked(*span);
    for (LazyObject *mate : on) mate->state = ObjectState::kBinding;
  }
  const size_t size = span->size;
  int from_device = span->device, to_device = DeviceOfTask(task_id);
  cudaError_t error = cudaSuccess;
  if (ReserveInTask(task_id, size) != Reserve::kDone) {  // it took back what it reserved
    error = cudaErrorMemoryAllocation;
  } else {
    error = to_device < 0 ? cudaErrorNoDevice : RemapSpan(span, to_device);
    CommitInTask(task_id, size, error == cudaSuccess ? size : 0);
  }
  bool end_old = false;
  {
    std::lock_guard lock(mu_);
    if (error == cudaSuccess) {
      span->task_id = task_id;
      size_t moved = 0;
      for (LazyObject *mate : on) {
        if (mate->task_id != from_task) continue;
        mate->task_id = task_id;
        ++moved;
      }
      if (auto it = tasks_.find(task_id); it != tasks_.end()) it->second->objects += moved;
      if (auto it = tasks_.find(from_task); it != tasks_.end()) {
        it->second->objects -= std::min(it->second->objects, moved);
        end_old = it->second->objects == 0 && it->second->lazy && it->second->depth == 0;
      }
    }
    for (LazyObject *mate : on) mate->state = ObjectState::kBound;
  }
  objects_cv_.notify_all();
  if (error != cudaSuccess) return error;
  std::fprintf(stderr,
               "mgb: moved %zu bytes from GPU %d (task %llu) to GPU %d (task %llu): one "
               "launch used memory of two tasks\n",
               size, from_device, static_cast<unsigned long long>(from_task), to_device,
               static_cast<unsigned long long>(task_id));
  ReleaseFromTask(from_task, size);
  if (end_old) FinishTask(from_task);
  return cudaSuccess;
}

// ---- launches

cudaError_t Runtime::WithRealPointers(
    std::vector<const void *> pointers, const std::string &what,
    const std::function<cudaError_t(const std::vector<void *> &, int)> &call) {
  std::vector<uintptr_t> unbound;
  uint64_t preferred = 0;
  {
    std::unique_lock lock(mu_);
    for (const void *pointer : pointers) {
      if (IsStandIn(pointer)) {
        Resolved resolved = ResolveLocked(lock, pointer);
        if (resolved.object == nullptr || resolved.object->freed) return cudaErrorInvalidValue;
        if (resolved.object->state == ObjectState::kUnbound) {
          unbound.push_back(reinterpret_cast<uintptr_t>(pointer));
        } else if (preferred == 0) {
          preferred = resolved.object->task_id;
        }
      } else if (preferred == 0 && pointer != nullptr) {
        preferred = RealOwnerLocked(reinterpret_cast<uintptr_t>(pointer));
      }
    }
  }
  if (!unbound.empty()) {
    cudaError_t error = Bind(unbound, LaunchShape{}, what, preferred);
    if (error != cudaSuccess) return error;
  }
  std::vector<void *> real;
  int device = -1;
  {
    std::unique_lock lock(mu_);
    for (const void *pointer : pointers) {
      if (!IsStandIn(pointer)) {
        real.push_back(const_cast<void *>(pointer));
        continue;
      }
      Resolved resolved = ResolveLocked(lock, pointer);
      std::optional<uintptr_t> translated = TranslateLocked(reinterpret_cast<uintptr_t>(pointer));
      if (resolved.object == nullptr || !translated) return cudaErrorInvalidValue;
      real.push_back(reinterpret_cast<void *>(*translated));
      if (auto it = tasks_.find(resolved.object->task_id); it != tasks_.end() && device < 0) {
        device = it->second->device;
      }
    }
  }
  if (device >= 0 && device != CurrentDevice()) api_.SetDevice(device);
  return call(real, device);
}

void *Runtime::RealPtr(const void *ptr) {
  if (!IsStandIn(ptr)) return const_cast<void *>(ptr);
  {
    std::unique_lock lock(mu_);
    Resolved resolved = ResolveLocked(lock, ptr);
    if (resolved.object == nullptr) return const_cast<void *>(ptr);  // a stream/event handle
    if (std::optional<uintptr_t> real = TranslateLocked(reinterpret_cast<uintptr_t>(ptr))) {
      return reinterpret_cast<void *>(*real);
    }
  }
  // Not prepared (e.g. reached only through memory the prepare did not see): bind it to this
  // thread's latest launch task.
  uint64_t task = CurrentTaskId() != 0 ? CurrentTaskId() : Thread().last_prepared;
  Bind({reinterpret_cast<uintptr_t>(ptr)}, LaunchShape{}, "mgb_arg", task);
  std::lock_guard lock(mu_);
  std::optional<uintptr_t> real = TranslateLocked(reinterpret_cast<uintptr_t>(ptr));
  if (real) return reinterpret_cast<void *>(*real);
  // Never silently: the kernel or library receiving it will fail, and this says why.
  std::fprintf(stderr,
               "mgb: device memory at %p could not be mapped on a GPU (freed, or refused "
               "by mgbd): the call receives an address with no memory behind it\n",
               ptr);
  return const_cast<void *>(ptr);
}

void Runtime::TranslateWords(void *bytes, size_t size) {
  // Binds the lazy buffers the words name; the bytes stay as they are (the addresses are real),
  // so a word of data that only looks like one of them is never changed.
  for (uintptr_t word : StandInsIn(bytes, size)) RealPtr(reinterpret_cast<const void *>(word));
}

cudaError_t Runtime::LaunchPrepare(mgb_dim3 grid, mgb_dim3 block, const void *kernel,
                                   const char *site, int nargs, const void *const *args,
                                   const size_t *arg_sizes) {
  if (!session_.Managed()) return cudaSuccess;
  std::vector<uintptr_t> standins;
  for (int i = 0; i < nargs; ++i) {
    if (args[i] == nullptr) continue;
    std::vector<uintptr_t> found = StandInsIn(args[i], arg_sizes[i]);
    standins.insert(standins.end(), found.begin(), found.end());
  }
  if (standins.empty()) {
    // Nothing lazy. Real memory libmgb made (a static task's, or eagerly bound) is used on its
    // task's GPU, whichever device the thread left current.
    int device = DeviceOfRealWords(nargs, args, arg_sizes);
    if (device >= 0 && device != CurrentDevice()) api_.SetDevice(device);
    // The launch runs there without any task of this process having landed on it: the
    // __constant__ data and limits recorded outside a task go there first. (A solver whose memory
    // was all thrust's ran its kernel with __constant__ n = 0 and printed wrong physics, exit 0.)
    PrepareDevice(device >= 0 ? device : CurrentDevice());
    return cudaSuccess;
  }
  return Bind(standins, ShapeOf(grid, block, kernel), site ? site : "?", 0, kernel == nullptr,
              kernel);
}

int Runtime::DeviceOfRealWords(int nargs, const void *const *args, const size_t *arg_sizes) {
  std::lock_guard lock(mu_);
  if (reals_.empty()) return -1;
  for (int i = 0; i < nargs; ++i) {
    if (args[i] == nullptr) continue;
    const auto *bytes = static_cast<const unsigned char *>(args[i]);
    for (size_t offset = 0; offset + sizeof(uintptr_t) <= arg_sizes[i];
         offset += sizeof(uintptr_t)) {
      uintptr_t word;
      std::memcpy(&word, bytes + offset, sizeof word);
      if (uint64_t task = RealOwnerLocked(word)) {
        if (auto it = tasks_.find(task); it != tasks_.end()) return it->second->device;
      }
    }
  }
  return -1;
}

cudaError_t Runtime::PreparePointers(const char *site, int n, const void *const *pointers) {
  if (!session_.Managed() || n <= 0 || pointers == nullptr) return cudaSuccess;
  std::vector<const void *> args(n);
  std::vector<size_t> sizes(n, sizeof(void *));
  for (int i = 0; i < n; ++i) args[i] = &pointers[i];
  return LaunchPrepare(mgb_dim3{1, 1, 1}, mgb_dim3{1, 1, 1}, nullptr, site, n, args.data(),
                       sizes.data());
}

void Runtime::BindAddressesIn(const void *src, size_t count, uint64_t preferred) {
  {
    std::lock_guard lock(mu_);
    if (objects_.empty()) return;
  }
  if (src == nullptr || count > session_.Config().pointer_scan_limit_bytes) return;
  std::vector<uintptr_t> found = StandInsIn(src, count);
  if (found.empty()) return;
  std::vector<uintptr_t> unbound;
  {
    std::unique_lock lock(mu_);
    for (uintptr_t word : found) {
      Resolved resolved = ResolveLocked(lock, reinterpret_cast<const void *>(word));
      if (resolved.object != nullptr && resolved.object->state == ObjectState::kUnbound &&
          !resolved.object->freed) {
        unbound.push_back(word);
      }
    }
  }
  if (!unbound.empty()) Bind(unbound, LaunchShape{}, "a copy of device pointers", preferred);
}

const std::vector<size_t> &Runtime::ParamSizes(const void *func) {
  std::lock_guard lock(mu_);
  auto [it, inserted] = param_sizes_.try_emplace(func);
  if (inserted) {
    size_t offset = 0, size = 0;
    for (size_t i = 0; api_.FuncGetParamInfo(func, i, &offset, &size) == cudaSuccess; ++i) {
      it->second.push_back(size);
    }
  }
  return it->second;
}

cudaError_t Runtime::LaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                                  size_t shared_bytes, cudaStream_t stream) {
  if (!session_.Managed()) {
    return api_.LaunchKernel(func, grid, block, args, shared_bytes, stream);
  }
  // The argument values go to CUDA as they are: a lazy buffer's address is its real one, the
  // preparation only binds (maps) the buffers they name.
  if (cudaError_t prepared = PrepareArgs(func, grid, block, args, "cudaLaunchKernel");
      prepared != cudaSuccess) {
    return prepared;
  }
  return api_.LaunchKernel(func, grid, block, args, shared_bytes, RealStream(stream));
}

cudaError_t Runtime::LaunchCooperativeKernel(const void *func, dim3 grid, dim3 block, void **args,
                                             size_t shared_bytes, cudaStream_t stream) {
  if (!session_.Managed()) {
    return api_.LaunchCooperativeKernel(func, grid, block, args, shared_bytes, stream);
  }
  if (cudaError_t prepared = PrepareArgs(func, grid, block, args, "cudaLaunchCooperativeKernel");
      prepared != cudaSuccess) {
    return prepared;
  }
  return api_.LaunchCooperativeKernel(func, grid, block, args, shared_bytes, RealStream(stream));
}

cudaError_t Runtime::LaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
                                     void **args) {
  if (!session_.Managed() || config == nullptr) return api_.LaunchKernelExC(config, func, args);
  if (cudaError_t prepared =
          PrepareArgs(func, config->gridDim, config->blockDim, args, "cudaLaunchKernelExC");
      prepared != cudaSuccess) {
    return prepared;
  }
  cudaLaunchConfig_t real = *config;
  real.stream = RealStream(config->stream);
  // Attributes that name an event (programmatic and launch-completion events) get the real one
  // on the launch's device; the others carry values, not handles.
  std::vector<cudaLaunchAttribute> attributes(config->attrs, config->attrs + config->numAttrs);
  for (cudaLaunchAttribute &attribute : attributes) {
    cudaEvent_t *event = nullptr;
    if (attribute.id == cudaLaunchAttributeProgrammaticEvent) {
      event = &attribute.val.programmaticEvent.event;
    } else if (attribute.id == cudaLaunchAttributeLaunchCompletionEvent) {
      event = &attribute.val.launchCompletionEvent.event;
    }
    if (event != nullptr && IsStandIn(*event)) {
      *event = static_cast<cudaEvent_t>(RealHandle(*event, CurrentDevice()));
    }
  }
  real.attrs = attributes.empty() ? nullptr : attributes.data();
  return api_.LaunchKernelExC(&real, func, args);
}

cudaError_t Runtime::PrepareArgs(const void *func, dim3 grid, dim3 block, void **args,
                                 const char *site) {
  const std::vector<size_t> &sizes = ParamSizes(func);
  return LaunchPrepare(mgb_dim3{grid.x, grid.y, grid.z}, mgb_dim3{block.x, block.y, block.z}, func,
                       site, static_cast<int>(sizes.size()), const_cast<const void *const *>(args),
                       sizes.data());
}

uint64_t Runtime::TaskOf(const void *standin) {
  std::unique_lock lock(mu_);
  Resolved resolved = ResolveLocked(lock, standin);
  return resolved.object != nullptr && resolved.object->state == ObjectState::kBound
             ? resolved.object->task_id
             : 0;
}

}  // namespace mgb::runtime
