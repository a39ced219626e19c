/* A library a user preloads after the guard (mgb run puts the guard first in LD_PRELOAD), taking
 * the driver's cuMemAlloc_v2 with dlsym(RTLD_NEXT): the next object in load order after it is
 * libcuda, so before the guard answered RTLD_NEXT for hooked names this reached the driver
 * uncounted. guard_probe's "nextalloc:MIB" step calls next_alloc. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

typedef int (*Alloc)(unsigned long long *, size_t);

__attribute__((visibility("default"))) int next_alloc(size_t bytes) {
  Alloc alloc = (Alloc)dlsym(RTLD_NEXT, "cuMemAlloc_v2");
  if (alloc == NULL) return -1;
  unsigned long long p = 0;
  return alloc(&p, bytes);
}
