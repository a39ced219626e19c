/* A stand-in for the CUDA driver (libcuda.so.1) for the guard's tests on machines without a GPU:
 * a device of FAKE_CUDA_TOTAL_MIB (default 16384) MiB whose allocations are numbers, never memory.
 * Like the real driver, cuGetProcAddress hands out internal functions, not the exported ones. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long dptr_t;
enum { kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kNotFound = 500, kMaxAllocations = 4096 };

static dptr_t g_next = 0x7f0000000000ull;
static size_t g_used = 0;
static struct { dptr_t address; size_t bytes; } g_allocations[kMaxAllocations];

static size_t Total(void) {
  const char *mib = getenv("FAKE_CUDA_TOTAL_MIB");
  return (size_t)(mib ? strtoull(mib, NULL, 10) : 16384) << 20;
}

static int Allocate(dptr_t *out, size_t bytes) {
  if (out == NULL || bytes == 0) return kInvalidValue;
  if (g_used + bytes > Total()) return kOutOfMemory;
  for (int i = 0; i < kMaxAllocations; ++i) {
    if (g_allocations[i].address == 0) {
      g_allocations[i].address = g_next;
      g_allocations[i].bytes = bytes;
      *out = g_next;
      g_next += (bytes + 0xfffff) & ~(dptr_t)0xfffff;
      g_used += bytes;
      return kSuccess;
    }
  }
  return kOutOfMemory;
}

static int Release(dptr_t address) {
  for (int i = 0; i < kMaxAllocations; ++i) {
    if (g_allocations[i].address == address && address != 0) {
      g_used -= g_allocations[i].bytes;
      g_allocations[i].address = 0;
      return kSuccess;
    }
  }
  return kInvalidValue;
}

static int MemAlloc(dptr_t *p, size_t bytes) { return Allocate(p, bytes); }
static int MemFree(dptr_t p) { return Release(p); }
static int MemAllocAsync(dptr_t *p, size_t bytes, void *stream) { (void)stream; return Allocate(p, bytes); }
static int MemFreeAsync(dptr_t p, void *stream) { (void)stream; return Release(p); }
static int MemAllocPitch(dptr_t *p, size_t *pitch, size_t width, size_t height, unsigned e) {
  (void)e;
  *pitch = (width + 511) / 512 * 512;
  return Allocate(p, *pitch * height);
}
static int MemCreate(dptr_t *handle, size_t bytes, const void *prop, unsigned long long flags) {
  (void)prop; (void)flags;
  return Allocate(handle, bytes);
}
static int MemRelease(dptr_t handle) { return Release(handle); }
static int MemGetInfo(size_t *free_bytes, size_t *total) {
  *total = Total();
  *free_bytes = *total - g_used;
  return kSuccess;
}
static int GetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags,
                          int *status);

static const struct { const char *name; void *function; } kTable[] = {
    {"cuMemAlloc", (void *)MemAlloc},       {"cuMemFree", (void *)MemFree},
    {"cuMemAllocAsync", (void *)MemAllocAsync}, {"cuMemFreeAsync", (void *)MemFreeAsync},
    {"cuMemAllocPitch", (void *)MemAllocPitch}, {"cuMemCreate", (void *)MemCreate},
    {"cuMemRelease", (void *)MemRelease},   {"cuMemGetInfo", (void *)MemGetInfo},
    {"cuGetProcAddress", (void *)GetProcAddress},
};

static int GetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags,
                          int *status) {
  (void)version; (void)flags;
  for (size_t i = 0; i < sizeof(kTable) / sizeof(kTable[0]); ++i) {
    if (strcmp(kTable[i].name, symbol) == 0) {
      *pfn = kTable[i].function;
      if (status) *status = 1; /* CU_GET_PROC_ADDRESS_SUCCESS */
      return kSuccess;
    }
  }
  *pfn = NULL;
  if (status) *status = 0;
  return kNotFound;
}

/* The exported entry points, as a program linked with -lcuda calls them. */
int cuGetProcAddress_v2(const char *s, void **p, int v, unsigned long long f, int *st) {
  return GetProcAddress(s, p, v, f, st);
}
int cuMemAlloc_v2(dptr_t *p, size_t bytes) { return MemAlloc(p, bytes); }
int cuMemFree_v2(dptr_t p) { return MemFree(p); }
int cuMemAllocAsync(dptr_t *p, size_t bytes, void *stream) { return MemAllocAsync(p, bytes, stream); }
int cuMemFreeAsync(dptr_t p, void *stream) { return MemFreeAsync(p, stream); }
int cuMemAllocPitch_v2(dptr_t *p, size_t *pitch, size_t w, size_t h, unsigned e) {
  return MemAllocPitch(p, pitch, w, h, e);
}
int cuMemCreate(dptr_t *h, size_t bytes, const void *prop, unsigned long long flags) {
  return MemCreate(h, bytes, prop, flags);
}
int cuMemRelease(dptr_t h) { return MemRelease(h); }
int cuMemGetInfo_v2(size_t *free_bytes, size_t *total) { return MemGetInfo(free_bytes, total); }

/* The calling thread's current device: FAKE_CUDA_DEVICE (default 0), which guard_probe's
 * device:N step sets, as cudaSetDevice would make it current. */
int cuCtxGetDevice(int *device) {
  const char *d = getenv("FAKE_CUDA_DEVICE");
  *device = d ? atoi(d) : 0;
  return kSuccess;
}

/* Virtual address ranges and mappings, as a spill makes them: numbers again. */
int cuMemAddressReserve(dptr_t *p, size_t size, size_t alignment, dptr_t addr,
                        unsigned long long flags) {
  (void)alignment, (void)addr, (void)flags;
  *p = g_next;
  g_next += size;
  return kSuccess;
}
int cuMemAddressFree(dptr_t p, size_t size) { (void)p, (void)size; return kSuccess; }
int cuMemMap(dptr_t p, size_t size, size_t offset, dptr_t handle, unsigned long long flags) {
  (void)p, (void)size, (void)offset, (void)handle, (void)flags;
  return kSuccess;
}
int cuMemUnmap(dptr_t p, size_t size) { (void)p, (void)size; return kSuccess; }
int cuMemSetAccess(dptr_t p, size_t size, const void *desc, size_t count) {
  (void)p, (void)size, (void)desc;
  return count == 1 ? kSuccess : kInvalidValue;
}
