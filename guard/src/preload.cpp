// libmgb-guard.so's entry points: the driver's allocation functions under their exported
// (versioned) names, cuGetProcAddress, and dlsym. CUDA 12+ runtimes, static or shared, open
// libcuda with dlopen and take cuGetProcAddress from it with dlsym on that handle, which a preload
// alone never sees; so dlsym hands out the guard's functions for the names below, and the guard's
// cuGetProcAddress swaps in its wrappers for the allocation functions the driver returns. The
// logic is GuardedDriver's (tested on the CPU); this file only wires it to the process.
#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>

#include "driver_types.h"
#include "grow_channel.h"
#include "guard_budget.h"
#include "guarded_driver.h"
#include "run_ledger.h"

using namespace mgb::guard;

#define MGB_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr cuuint64_t kPerThreadDefaultStream = 2;  // CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
constexpr int kVersion2 = 3020;                    // CUDA 3.2: the _v2 allocation functions
constexpr int kVersion12 = 12000;                  // CUDA 12.0: cuGetProcAddress_v2

using Dlsym = void *(*)(void *, const char *);
using GetProcV2 = CUresult (*)(const char *, void **, int, cuuint64_t, int *);
using GetProcV1 = CUresult (*)(const char *, void **, int, cuuint64_t);

// glibc's own dlsym (ours shadows it for the whole process).
Dlsym RealDlsym() {
  static const Dlsym real = [] {
    for (const char *version : {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"}) {
      if (void *found = dlvsym(RTLD_NEXT, "dlsym", version)) return reinterpret_cast<Dlsym>(found);
    }
    return static_cast<Dlsym>(nullptr);
  }();
  return real;
}

// One variant of a driver function the guard wraps. cuGetProcAddress(base, version, flags) names
// the variant by the CUDA version it was asked for (the _v2 of cuMemAlloc since 3.2, of
// cuGetProcAddress since 12.0) and the per-thread-default-stream flag (the _ptsz ones); the
// pointer it returns may be the driver's internal one, so the variant is chosen by those rules,
// not by comparing pointers.
struct Hook {
  const char *base;      // the name asked of cuGetProcAddress
  const char *exported;  // the driver's exported symbol of the variant the guard wraps
  void *wrapper;         // the guard's function of that name
  int min_version = 0;   // cuGetProcAddress's cudaVersion range for this variant: [min, max)
  int max_version = 1 << 30;
  bool stream_ordered = false;  // has a per-thread-default-stream sibling (_ptsz)
  bool per_thread = false;      // is that sibling (CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
  void *real = nullptr;         // the driver's, found at start
};

Hook *Hooks(size_t *count);

struct State {
  RealDriver real;
  GetProcV2 get_proc_v2 = nullptr;
  GetProcV1 get_proc_v1 = nullptr;
  std::unique_ptr<RunLedger> ledger;
  std::unique_ptr<GrowRequester> requester;
  std::unique_ptr<GuardBudget> budget;
  std::unique_ptr<GuardedDriver> driver;
  LedgerCounters closed;  // counts against nothing: the run's ledger could not be opened
  bool verbose = false;
};

State *g_state = nullptr;  // never freed: the guard must work in exit handlers too
std::once_flag g_once;
thread_local bool t_initializing = false;

bool EnvironmentSwitch(const char *name) {
  const char *value = std::getenv(name);
  if (value == nullptr) return false;
  for (const char *on : {"1", "yes", "true", "allow"}) {
    if (std::strcmp(value, on) == 0) return true;
  }
  return false;
}

template <typename F>
void Resolve(F *slot, const char *exported) {
  size_t count = 0;
  Hook *hooks = Hooks(&count);
  for (size_t i = 0; i < count; ++i) {
    if (std::strcmp(hooks[i].exported, exported) == 0) *slot = reinterpret_cast<F>(hooks[i].real);
  }
}

void Initialize() {
  t_initializing = true;
  auto *state = new State;
  state->verbose = EnvironmentSwitch("MGB_GUARD_VERBOSE");
  void *libcuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (libcuda == nullptr) libcuda = dlopen("libcuda.so.1", RTLD_LAZY);
  size_t count = 0;
  Hook *hooks = Hooks(&count);
  for (size_t i = 0; libcuda != nullptr && i < count; ++i) {
    hooks[i].real = RealDlsym()(libcuda, hooks[i].exported);
  }
  RealDriver &real = state->real;
  Resolve(&real.mem_alloc, "cuMemAlloc_v2");
  Resolve(&real.mem_free, "cuMemFree_v2");
  Resolve(&real.mem_alloc_pitch, "cuMemAllocPitch_v2");
  Resolve(&real.mem_alloc_managed, "cuMemAllocManaged");
  Resolve(&real.mem_alloc_async, "cuMemAllocAsync");
  Resolve(&real.mem_alloc_async_ptsz, "cuMemAllocAsync_ptsz");
  Resolve(&real.mem_alloc_from_pool_async, "cuMemAllocFromPoolAsync");
  Resolve(&real.mem_alloc_from_pool_async_ptsz, "cuMemAllocFromPoolAsync_ptsz");
  Resolve(&real.mem_free_async, "cuMemFreeAsync");
  Resolve(&real.mem_free_async_ptsz, "cuMemFreeAsync_ptsz");
  Resolve(&real.mem_create, "cuMemCreate");
  Resolve(&real.mem_release, "cuMemRelease");
  Resolve(&real.mem_get_info, "cuMemGetInfo_v2");
  // Not wrapped (a spill's own calls): straight from the driver.
  auto plain = [&](auto *slot, const char *name) {
    *slot = libcuda == nullptr ? nullptr
                               : reinterpret_cast<std::remove_reference_t<decltype(*slot)>>(
                                     RealDlsym()(libcuda, name));
  };
  plain(&real.mem_address_reserve, "cuMemAddressReserve");
  plain(&real.mem_address_free, "cuMemAddressFree");
  plain(&real.mem_map, "cuMemMap");
  plain(&real.mem_unmap, "cuMemUnmap");
  plain(&real.mem_set_access, "cuMemSetAccess");
  plain(&real.ctx_get_device, "cuCtxGetDevice");
  Resolve(&state->get_proc_v2, "cuGetProcAddress_v2");
  Resolve(&state->get_proc_v1, "cuGetProcAddress");

  const char *dir = std::getenv("MGB_GUARD_DIR");
  if (dir != nullptr && *dir != '\0' && libcuda != nullptr) {
    if (real.mem_alloc == nullptr || real.mem_free == nullptr || state->get_proc_v2 == nullptr) {
      std::fprintf(stderr,
                   "mgb guard: this CUDA driver lacks cuMemAlloc_v2, cuMemFree_v2 or "
                   "cuGetProcAddress_v2; the program runs unguarded\n");
    } else {
      std::string error;
      state->ledger = RunLedger::Open(dir, &error);
      if (state->ledger == nullptr) {
        // The run promised counting: fail closed. Nothing past a grant of 0 is admitted, as if
        // `mgb run` refused every grow (MGB_UNMANAGED=1: unguarded instead, said once).
        std::fprintf(stderr, "mgb guard: %s; device allocations are refused\n", error.c_str());
        const std::string why = "the run's ledger cannot be opened (" + error + ")";
        state->budget = std::make_unique<GuardBudget>(
            state->closed,
            [why](uint64_t, uint32_t) {
              return GrowAnswer{GrowAnswer::kUnavailable, 0, why};
            },
            EnvironmentSwitch("MGB_UNMANAGED"));
      } else {
        state->requester = std::make_unique<GrowRequester>(dir);
        GrowRequester *requester = state->requester.get();
        state->budget = std::make_unique<GuardBudget>(
            state->ledger->counters(),
            [requester](uint64_t missing, uint32_t gpu) { return requester->Ask(missing, gpu); },
            EnvironmentSwitch("MGB_UNMANAGED"), EnvironmentSwitch("MGB_GUARD_SPILL"));
        state->ledger->counters().guarded.fetch_add(1);
      }
    }
  }
  state->driver = std::make_unique<GuardedDriver>(real, state->budget.get());
  g_state = state;
  t_initializing = false;
}

State &Get() {
  std::call_once(g_once, Initialize);
  return *g_state;
}

// The guard's function to hand out instead of what the driver returned for `name`, or null when
// it is not one the guard wraps. From dlsym `name` is an exported name; from cuGetProcAddress a
// base name, with the version and flags it was asked with.
void *WrapperFor(const char *name, const void *found, bool base_name, int version = 0,
                 cuuint64_t flags = 0) {
  if (t_initializing || found == nullptr || name == nullptr || std::strncmp(name, "cu", 2) != 0) {
    return nullptr;
  }
  size_t count = 0;
  Hook *hooks = Hooks(&count);
  auto named = [&](size_t i) {
    return std::strcmp(base_name ? hooks[i].base : hooks[i].exported, name) == 0;
  };
  bool known_name = false;
  for (size_t i = 0; i < count && !known_name; ++i) known_name = named(i);
  if (!known_name) return nullptr;
  const State &state = Get();
  // Without a run to count against, the program keeps the driver's own functions.
  if (!state.driver->Active()) return nullptr;
  const bool per_thread = (flags & kPerThreadDefaultStream) != 0;
  for (size_t i = 0; i < count; ++i) {
    if (!named(i) || hooks[i].real == nullptr) continue;
    if (base_name && (version < hooks[i].min_version || version >= hooks[i].max_version ||
                      (hooks[i].stream_ordered && hooks[i].per_thread != per_thread))) {
      continue;
    }
    if (state.verbose) {
      std::fprintf(stderr, "mgb guard: %s(\"%s\") -> the guard's %s\n",
                   base_name ? "cuGetProcAddress" : "dlsym", name, hooks[i].exported);
    }
    return hooks[i].wrapper;
  }
  if (base_name && version >= kVersion2) {
    std::fprintf(stderr,
                 "mgb guard: cuGetProcAddress(\"%s\", %d, %llu) asks for a variant the "
                 "guard does not know; allocations through it are not counted\n",
                 name, version, static_cast<unsigned long long>(flags));
  }
  return nullptr;
}

// dlsym(RTLD_NEXT, name) as glibc answers it for the caller: the first object after the caller's
// in load order that defines `name`. (Forwarding RTLD_NEXT would search after the guard instead.)
void *NextSymbol(const void *caller, const char *name) {
  Dl_info info;
  link_map *map = nullptr;
  if (dladdr1(caller, &info, reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP) == 0 ||
      map == nullptr) {
    return nullptr;
  }
  for (link_map *next = map->l_next; next != nullptr; next = next->l_next) {
    void *handle = dlopen(next->l_name, RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void *found = RealDlsym()(handle, name);
    dlclose(handle);
    link_map *owner = nullptr;
    if (found != nullptr &&
        dladdr1(found, &info, reinterpret_cast<void **>(&owner), RTLD_DL_LINKMAP) != 0 &&
        owner == next) {
      return found;
    }
  }
  return nullptr;
}

}  // namespace

namespace {

// After the driver answered cuGetProcAddress(symbol, version, flags) with `result`: the guard's
// function in *pfn in place of the driver's, where it wraps that one.
CUresult SwapInWrapper(const char *symbol, void **pfn, int cuda_version, cuuint64_t flags,
                       CUresult result) {
  if (result != kCudaSuccess || pfn == nullptr) return result;
  if (void *wrapper = WrapperFor(symbol, *pfn, /*base_name=*/true, cuda_version, flags)) {
    *pfn = wrapper;
  }
  return result;
}

}  // namespace

// ---- the driver's entry points, under the names libcuda exports them

MGB_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  return Get().driver->MemAlloc(ptr, bytes);
}
MGB_EXPORT CUresult cuMemFree_v2(CUdeviceptr ptr) { return Get().driver->MemFree(ptr); }
MGB_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *ptr, size_t *pitch, size_t width, size_t height,
                                       unsigned element_bytes) {
  return Get().driver->MemAllocPitch(ptr, pitch, width, height, element_bytes);
}
MGB_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned flags) {
  return Get().driver->MemAllocManaged(ptr, bytes, flags);
}
MGB_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *ptr, size_t bytes, CUstream stream) {
  return Get().driver->MemAllocAsync(ptr, bytes, stream, false);
}
MGB_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *ptr, size_t bytes, CUstream stream) {
  return Get().driver->MemAllocAsync(ptr, bytes, stream, true);
}
MGB_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *ptr, size_t bytes, CUmemoryPool pool,
                                            CUstream stream) {
  return Get().driver->MemAllocFromPoolAsync(ptr, bytes, pool, stream, false);
}
MGB_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *ptr, size_t bytes, CUmemoryPool pool,
                                                 CUstream stream) {
  return Get().driver->MemAllocFromPoolAsync(ptr, bytes, pool, stream, true);
}
MGB_EXPORT CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream stream) {
  return Get().driver->MemFreeAsync(ptr, stream, false);
}
MGB_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr ptr, CUstream stream) {
  return Get().driver->MemFreeAsync(ptr, stream, true);
}
MGB_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t bytes,
                                const void *prop, unsigned long long flags) {
  return Get().driver->MemCreate(handle, bytes, prop, flags);
}
MGB_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  return Get().driver->MemRelease(handle);
}
MGB_EXPORT CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
  return Get().driver->MemGetInfo(free, total);
}

MGB_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cuda_version,
                                        cuuint64_t flags, int *symbol_status) {
  const State &state = Get();
  if (state.get_proc_v2 == nullptr) return kCudaErrorNotFound;
  return SwapInWrapper(symbol, pfn, cuda_version, flags,
                       state.get_proc_v2(symbol, pfn, cuda_version, flags, symbol_status));
}

MGB_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cuda_version,
                                     cuuint64_t flags) {
  const State &state = Get();
  if (state.get_proc_v1 == nullptr) return kCudaErrorNotFound;
  return SwapInWrapper(symbol, pfn, cuda_version, flags,
                       state.get_proc_v1(symbol, pfn, cuda_version, flags));
}

// libmgb (a rewritten program) calls this when it finds itself under `mgb run`: it reserves its
// tasks' memory itself, so the guard counts nothing more in this process.
MGB_EXPORT void mgb_guard_disable(const char *why) {
  State &state = Get();
  if (!state.driver->Active()) return;
  state.driver->Disable();
  std::fprintf(stderr, "mgb guard: standing down (%s)\n", why);
}

MGB_EXPORT void *dlsym(void *handle, const char *name) {
  // RTLD_NEXT from an object after the guard (a user's own preload, a library listed before
  // libcuda) finds the driver's function itself: a wrapped one is the guard's all the same.
  void *found = handle == RTLD_NEXT ? NextSymbol(__builtin_return_address(0), name)
                                    : RealDlsym()(handle, name);
  if (void *wrapper = WrapperFor(name, found, /*base_name=*/false)) return wrapper;
  return found;
}

namespace {

Hook *Hooks(size_t *count) {
  auto fn = [](auto *function) { return reinterpret_cast<void *>(function); };
  constexpr int kAny = 1 << 30;
  static Hook hooks[] = {
      // base, exported, wrapper, [min, max) version, stream_ordered, per_thread
      {"cuMemAlloc", "cuMemAlloc_v2", fn(&cuMemAlloc_v2), kVersion2, kAny, false, false},
      {"cuMemFree", "cuMemFree_v2", fn(&cuMemFree_v2), kVersion2, kAny, false, false},
      {"cuMemAllocPitch", "cuMemAllocPitch_v2", fn(&cuMemAllocPitch_v2), kVersion2, kAny, false,
       false},
      {"cuMemAllocManaged", "cuMemAllocManaged", fn(&cuMemAllocManaged), 0, kAny, false, false},
      {"cuMemAllocAsync", "cuMemAllocAsync", fn(&cuMemAllocAsync), 0, kAny, true, false},
      {"cuMemAllocAsync", "cuMemAllocAsync_ptsz", fn(&cuMemAllocAsync_ptsz), 0, kAny, true, true},
      {"cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync", fn(&cuMemAllocFromPoolAsync), 0, kAny,
       true, false},
      {"cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync_ptsz", fn(&cuMemAllocFromPoolAsync_ptsz),
       0, kAny, true, true},
      {"cuMemFreeAsync", "cuMemFreeAsync", fn(&cuMemFreeAsync), 0, kAny, true, false},
      {"cuMemFreeAsync", "cuMemFreeAsync_ptsz", fn(&cuMemFreeAsync_ptsz), 0, kAny, true, true},
      {"cuMemCreate", "cuMemCreate", fn(&cuMemCreate), 0, kAny, false, false},
      {"cuMemRelease", "cuMemRelease", fn(&cuMemRelease), 0, kAny, false, false},
      {"cuMemGetInfo", "cuMemGetInfo_v2", fn(&cuMemGetInfo_v2), kVersion2, kAny, false, false},
      {"cuGetProcAddress", "cuGetProcAddress_v2", fn(&cuGetProcAddress_v2), kVersion12, kAny, false,
       false},
      {"cuGetProcAddress", "cuGetProcAddress", fn(&cuGetProcAddress), 0, kVersion12, false, false},
  };
  *count = sizeof(hooks) / sizeof(hooks[0]);
  return hooks;
}

}  // namespace
