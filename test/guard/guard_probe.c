/* A program that allocates device memory the ways CUDA programs reach the driver, for the guard's
 * tests against fake_libcuda. Built twice: as the CUDA runtime does it (dlopen libcuda.so.1, dlsym
 * cuGetProcAddress_v2, ask it for each function) and, with GUARD_PROBE_LINKED, as a C program
 * linked with -lcuda calls the driver. Each argument is one step; each prints its result:
 *   alloc:MIB async:MIB pitch:MIB vmm:MIB   allocate (the last one made is freed by `free`)
 *   free info sleep:MS next fork:MIB
 *   setuid:UID      become user (and group) UID
 *   nextalloc:MIB   allocate through next_alloc_preload.c's dlsym(RTLD_NEXT) (it must be preloaded)
 *   device:N        make device N current (fake_libcuda's cuCtxGetDevice answers it)
 *   visible         print CUDA_VISIBLE_DEVICES */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef unsigned long long dptr_t;
typedef int (*Alloc)(dptr_t *, size_t);
typedef int (*Free)(dptr_t);
typedef int (*AllocAsync)(dptr_t *, size_t, void *);
typedef int (*AllocPitch)(dptr_t *, size_t *, size_t, size_t, unsigned);
typedef int (*Create)(dptr_t *, size_t, const void *, unsigned long long);
typedef int (*Info)(size_t *, size_t *);
typedef int (*GetProc)(const char *, void **, int, unsigned long long, int *);

#ifdef GUARD_PROBE_LINKED
int cuMemAlloc_v2(dptr_t *, size_t);
int cuMemFree_v2(dptr_t);
int cuMemAllocAsync(dptr_t *, size_t, void *);
int cuMemAllocPitch_v2(dptr_t *, size_t *, size_t, size_t, unsigned);
int cuMemCreate(dptr_t *, size_t, const void *, unsigned long long);
int cuMemRelease(dptr_t);
int cuMemGetInfo_v2(size_t *, size_t *);
static void *Find(const char *base) {
  if (strcmp(base, "cuMemAlloc") == 0) return (void *)cuMemAlloc_v2;
  if (strcmp(base, "cuMemFree") == 0) return (void *)cuMemFree_v2;
  if (strcmp(base, "cuMemAllocAsync") == 0) return (void *)cuMemAllocAsync;
  if (strcmp(base, "cuMemAllocPitch") == 0) return (void *)cuMemAllocPitch_v2;
  if (strcmp(base, "cuMemCreate") == 0) return (void *)cuMemCreate;
  if (strcmp(base, "cuMemRelease") == 0) return (void *)cuMemRelease;
  return (void *)cuMemGetInfo_v2;
}
#else
static void *Find(const char *base) {
  static GetProc get_proc = NULL;
  if (get_proc == NULL) {
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver == NULL) { fprintf(stderr, "probe: %s\n", dlerror()); exit(3); }
    get_proc = (GetProc)dlsym(driver, "cuGetProcAddress_v2");
    if (get_proc == NULL) { fprintf(stderr, "probe: no cuGetProcAddress_v2\n"); exit(3); }
  }
  void *function = NULL;
  if (get_proc(base, &function, 13000, 0, NULL) != 0 || function == NULL) {
    fprintf(stderr, "probe: no %s\n", base);
    exit(3);
  }
  return function;
}
#endif

int main(int argc, char **argv) {
  dptr_t last = 0;
  int last_is_vmm = 0;
  setvbuf(stdout, NULL, _IONBF, 0);
  for (int i = 1; i < argc; ++i) {
    const char *step = argv[i];
    const char *colon = strchr(step, ':');
    const size_t mib = colon ? strtoull(colon + 1, NULL, 10) : 0, bytes = mib << 20;
    int rc = 0;
    if (strncmp(step, "alloc:", 6) == 0) {
      rc = ((Alloc)Find("cuMemAlloc"))(&last, bytes); last_is_vmm = 0;
    } else if (strncmp(step, "async:", 6) == 0) {
      rc = ((AllocAsync)Find("cuMemAllocAsync"))(&last, bytes, NULL); last_is_vmm = 0;
    } else if (strncmp(step, "pitch:", 6) == 0) {
      size_t pitch = 0;
      rc = ((AllocPitch)Find("cuMemAllocPitch"))(&last, &pitch, 1000, mib * 1024, 4); last_is_vmm = 0;
    } else if (strncmp(step, "vmm:", 4) == 0) {
      rc = ((Create)Find("cuMemCreate"))(&last, bytes, NULL, 0); last_is_vmm = 1;
    } else if (strcmp(step, "free") == 0) {
      rc = last_is_vmm ? ((Free)Find("cuMemRelease"))(last) : ((Free)Find("cuMemFree"))(last);
    } else if (strcmp(step, "info") == 0) {
      size_t free_bytes = 0, total = 0;
      rc = ((Info)Find("cuMemGetInfo"))(&free_bytes, &total);
      printf("info free=%zu total=%zu MiB\n", free_bytes >> 20, total >> 20);
    } else if (strncmp(step, "sleep:", 6) == 0) {
      usleep((useconds_t)mib * 1000);
    } else if (strncmp(step, "setuid:", 7) == 0) {  /* drops root's privileges, as services do */
      rc = setgid((gid_t)mib) != 0 || setuid((uid_t)mib) != 0;
    } else if (strncmp(step, "nextalloc:", 10) == 0) {
      int (*next_alloc)(size_t) = (int (*)(size_t))dlsym(RTLD_DEFAULT, "next_alloc");
      rc = next_alloc != NULL ? next_alloc(bytes) : 99;
    } else if (strncmp(step, "device:", 7) == 0) {
      rc = setenv("FAKE_CUDA_DEVICE", colon + 1, 1);
    } else if (strcmp(step, "visible") == 0) {
      const char *visible = getenv("CUDA_VISIBLE_DEVICES");
      printf("visible=%s\n", visible ? visible : "(unset)");
    } else if (strcmp(step, "next") == 0) {
      rc = dlsym(RTLD_NEXT, "puts") == dlsym(RTLD_DEFAULT, "puts") ? 0 : 1;
    } else if (strncmp(step, "fork:", 5) == 0) {
      const pid_t child = fork();
      if (child == 0) {
        dptr_t mine = 0;
        _exit(((Alloc)Find("cuMemAlloc"))(&mine, bytes));
      }
      int status = 0;
      waitpid(child, &status, 0);
      rc = WIFEXITED(status) ? WEXITSTATUS(status) : 100;
    } else {
      fprintf(stderr, "probe: unknown step %s\n", step);
      return 2;
    }
    printf("%s rc=%d\n", step, rc);
  }
  return 0;
}
