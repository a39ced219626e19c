// vmm_probe: the facts libmgb's address design rests on, measured on the GPU machine.
// 1. Driver entry points reached through the runtime (no -lcuda), and whether that, or reserving
//    virtual addresses, creates a context on any GPU (a context costs ~500 MiB on its GPU).
// 2. A range reserved before the program's task is placed, mapped later on the GPU mgbd chose:
//    copies, sets, kernels and cudaPointerGetAttributes on it; what a copy into it says while it
//    is unmapped, and whether that error is sticky.
// 3. Costs: create+map+access and unmap+release against cudaMalloc/cudaFree, per size.
// 4. With two GPUs: the same range remapped from one GPU to the other (migration), data kept.
// Usage: vmm_probe   (prints one line per fact; exit 1 if a fact the design needs fails)
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define DRIVER(name) static decltype(&name) p_##name = nullptr
DRIVER(cuMemAddressReserve);
DRIVER(cuMemAddressFree);
DRIVER(cuMemCreate);
DRIVER(cuMemRelease);
DRIVER(cuMemMap);
DRIVER(cuMemUnmap);
DRIVER(cuMemSetAccess);
DRIVER(cuMemGetAllocationGranularity);
DRIVER(cuDevicePrimaryCtxGetState);
DRIVER(cuCtxGetCurrent);
DRIVER(cuDeviceGetAttribute);

static int failures = 0;
static void Check(bool ok, const char *what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++failures;
}

template <class F>
static void Load(const char *name, F *fn) {
  cudaDriverEntryPointQueryResult q;
  cudaError_t e = cudaGetDriverEntryPointByVersion(name, reinterpret_cast<void **>(fn), 12000,
                                                   cudaEnableDefault, &q);
  if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) {
    std::printf("FAIL entry point %s: %s %d\n", name, cudaGetErrorString(e), int(q));
    std::exit(1);
  }
}

static void ContextStates(const char *when, int devices) {
  for (int d = 0; d < devices; ++d) {
    unsigned flags = 0;
    int active = -1;
    CUresult r = p_cuDevicePrimaryCtxGetState(d, &flags, &active);
    CUcontext cur = nullptr;
    p_cuCtxGetCurrent(&cur);
    std::printf("info %s: device %d primary context active=%d (r=%d), current ctx %p\n", when, d,
                active, int(r), (void *)cur);
  }
}

static double Ms(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
}

__global__ void Fill(unsigned *p, size_t n, unsigned v) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = v + unsigned(i);
}

static CUmemAllocationProp PropOn(int device) {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

static CUresult MapOn(CUdeviceptr va, size_t size, int device, CUmemGenericAllocationHandle *h) {
  CUmemAllocationProp prop = PropOn(device);
  CUresult r = p_cuMemCreate(h, size, &prop, 0);
  if (r != CUDA_SUCCESS) return r;
  r = p_cuMemMap(va, size, 0, *h, 0);
  if (r != CUDA_SUCCESS) return r;
  CUmemAccessDesc access = {};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return p_cuMemSetAccess(va, size, &access, 1);
}

int main() {
  int devices = 0;
  Load("cuMemAddressReserve", &p_cuMemAddressReserve);
  Load("cuMemAddressFree", &p_cuMemAddressFree);
  Load("cuMemCreate", &p_cuMemCreate);
  Load("cuMemRelease", &p_cuMemRelease);
  Load("cuMemMap", &p_cuMemMap);
  Load("cuMemUnmap", &p_cuMemUnmap);
  Load("cuMemSetAccess", &p_cuMemSetAccess);
  Load("cuMemGetAllocationGranularity", &p_cuMemGetAllocationGranularity);
  Load("cuDevicePrimaryCtxGetState", &p_cuDevicePrimaryCtxGetState);
  Load("cuCtxGetCurrent", &p_cuCtxGetCurrent);
  Load("cuDeviceGetAttribute", &p_cuDeviceGetAttribute);
  cudaGetDeviceCount(&devices);
  std::printf("info devices %d\n", devices);
  ContextStates("after entry points", devices);
  for (int d = 0; d < devices; ++d) {
    int vmm = 0;
    p_cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, d);
    std::printf("info device %d VMM supported=%d\n", d, vmm);
  }
  size_t gran = 0;
  CUmemAllocationProp prop0 = PropOn(0);
  CUresult gr = p_cuMemGetAllocationGranularity(&gran, &prop0, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  std::printf("info granularity r=%d %zu bytes\n", int(gr), gran);

  // Reserve before any context: 1 TiB, as the stand-in arena does.
  CUdeviceptr arena = 0;
  const size_t arena_size = size_t{1} << 40;
  CUresult r = p_cuMemAddressReserve(&arena, arena_size, 0, 0, 0);
  std::printf("info reserve 1 TiB before any context: r=%d at %p\n", int(r), (void *)arena);
  ContextStates("after reserve", devices);
  cudaError_t last = cudaGetLastError();
  std::printf("info last error after driver calls: %s\n", cudaGetErrorName(last));
  if (r != CUDA_SUCCESS) {
    cudaSetDevice(devices - 1);
    cudaFree(0);
    r = p_cuMemAddressReserve(&arena, arena_size, 0, 0, 0);
    std::printf("info reserve 1 TiB after a context on device %d: r=%d\n", devices - 1, int(r));
  }
  Check(r == CUDA_SUCCESS, "reserve 1 TiB of virtual addresses");
  if (r != CUDA_SUCCESS) return 1;

  // The task lands on the last GPU.
  const int dev = devices - 1;
  cudaSetDevice(dev);
  const size_t n = 64u << 20;  // 256 MiB of unsigned
  const size_t bytes = n * sizeof(unsigned);
  CUdeviceptr va = arena;
  unsigned *p = reinterpret_cast<unsigned *>(va);
  std::vector<unsigned> host(n, 7u), back(n, 0u);
  cudaError_t e = cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice);
  std::printf("info copy into an unmapped reserved range: %s\n", cudaGetErrorName(e));
  cudaGetLastError();
  e = cudaMemset(p, 0, bytes);
  std::printf("info memset of an unmapped reserved range: %s\n", cudaGetErrorName(e));
  cudaGetLastError();
  void *probe = nullptr;
  e = cudaMalloc(&probe, 1024);
  Check(e == cudaSuccess, "an ordinary cudaMalloc after those errors (not sticky)");
  cudaFree(probe);
  ContextStates("after first runtime use on the task's GPU", devices);

  CUmemGenericAllocationHandle h = 0;
  r = MapOn(va, bytes, dev, &h);
  Check(r == CUDA_SUCCESS, "create + map + set access on the task's GPU");
  Check(cudaMemcpy(p, host.data(), bytes, cudaMemcpyHostToDevice) == cudaSuccess,
        "cudaMemcpy HostToDevice into the mapped range");
  Check(cudaMemcpy(p + 1, host.data(), 64, cudaMemcpyDefault) == cudaSuccess,
        "cudaMemcpy Default (interior pointer)");
  Check(cudaMemset(p + n / 2, 0, bytes / 2) == cudaSuccess, "cudaMemset on the upper half");
  Fill<<<1024, 256>>>(p, n / 2, 100);
  Check(cudaDeviceSynchronize() == cudaSuccess, "a kernel writing through the pointer");
  Check(cudaMemcpy(back.data(), p, bytes, cudaMemcpyDeviceToHost) == cudaSuccess,
        "cudaMemcpy DeviceToHost");
  Check(back[0] == 100 && back[n / 2 - 1] == 100 + unsigned(n / 2 - 1) && back[n / 2] == 0 &&
            back[n - 1] == 0,
        "the data is what the kernel and memset wrote");
  cudaPointerAttributes attr;
  e = cudaPointerGetAttributes(&attr, p + 5);
  Check(e == cudaSuccess && attr.type == cudaMemoryTypeDevice && attr.device == dev,
        "cudaPointerGetAttributes: device memory on the task's GPU");
  unsigned *q = nullptr;
  Check(cudaMalloc(&q, bytes) == cudaSuccess &&
            cudaMemcpy(q, p, bytes, cudaMemcpyDeviceToDevice) == cudaSuccess,
        "cudaMemcpy DeviceToDevice to ordinary memory");
  cudaFree(q);

  // Migration: the same address, now backed on device 0, data kept.
  if (devices > 1) {
    CUdeviceptr tmp = 0;
    CUmemGenericAllocationHandle h2 = 0;
    Check(p_cuMemAddressReserve(&tmp, bytes, 0, 0, 0) == CUDA_SUCCESS &&
              MapOn(tmp, bytes, 0, &h2) == CUDA_SUCCESS,
          "a second range backed on device 0");
    Check(cudaMemcpyPeer(reinterpret_cast<void *>(tmp), 0, p, dev, bytes) == cudaSuccess,
          "peer copy to it");
    // cudaMemcpyPeer is asynchronous with respect to the host: both GPUs finish it before unmap.
    cudaError_t synced_from = cudaDeviceSynchronize();
    cudaSetDevice(0);
    cudaError_t synced_to = cudaDeviceSynchronize();
    std::printf("info after the peer copy: sync source %s, sync destination %s\n",
                cudaGetErrorName(synced_from), cudaGetErrorName(synced_to));
    std::fill(back.begin(), back.end(), 0u);
    Check(cudaMemcpy(back.data(), reinterpret_cast<void *>(tmp), bytes, cudaMemcpyDeviceToHost) ==
                  cudaSuccess &&
              back[0] == 100 && back[n - 1] == 0,
          "the staging range holds the data (a peer copy between mappings each accessible "
          "from its own GPU only)");
    cudaSetDevice(dev);
    Check(p_cuMemUnmap(va, bytes) == CUDA_SUCCESS && p_cuMemRelease(h) == CUDA_SUCCESS &&
              p_cuMemUnmap(tmp, bytes) == CUDA_SUCCESS && p_cuMemAddressFree(tmp, bytes) == CUDA_SUCCESS,
          "unmap both");
    h = h2;
    CUmemAccessDesc access = {};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = 0;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    Check(p_cuMemMap(va, bytes, 0, h, 0) == CUDA_SUCCESS &&
              p_cuMemSetAccess(va, bytes, &access, 1) == CUDA_SUCCESS,
          "the original address remapped onto device 0");
    cudaSetDevice(0);
    std::fill(back.begin(), back.end(), 0u);
    Check(cudaMemcpy(back.data(), p, bytes, cudaMemcpyDeviceToHost) == cudaSuccess &&
              back[0] == 100 && back[n - 1] == 0,
          "data kept after migration");
  }
  Check(p_cuMemUnmap(va, bytes) == CUDA_SUCCESS && p_cuMemRelease(h) == CUDA_SUCCESS,
        "unmap and release");
  e = cudaMemcpy(p, host.data(), 64, cudaMemcpyHostToDevice);
  std::printf("info copy into the range after unmap: %s\n", cudaGetErrorName(e));
  cudaGetLastError();

  // Costs, on the task's GPU, against cudaMalloc/cudaFree.
  cudaSetDevice(dev);
  for (size_t mib : {2, 64, 1024, 8192}) {
    size_t size = mib << 20;
    const int reps = mib >= 1024 ? 3 : 20;
    double map_ms = 0, unmap_ms = 0, malloc_ms = 0, free_ms = 0;
    for (int i = 0; i < reps; ++i) {
      auto t = std::chrono::steady_clock::now();
      CUmemGenericAllocationHandle hh = 0;
      CUresult rr = MapOn(arena, size, dev, &hh);
      map_ms += Ms(t);
      if (rr != CUDA_SUCCESS) { std::printf("FAIL map %zu MiB: %d\n", mib, int(rr)); ++failures; break; }
      t = std::chrono::steady_clock::now();
      p_cuMemUnmap(arena, size);
      p_cuMemRelease(hh);
      unmap_ms += Ms(t);
      void *m = nullptr;
      t = std::chrono::steady_clock::now();
      cudaMalloc(&m, size);
      malloc_ms += Ms(t);
      t = std::chrono::steady_clock::now();
      cudaFree(m);
      free_ms += Ms(t);
    }
    std::printf("cost %5zu MiB: create+map+access %.3f ms, unmap+release %.3f ms; cudaMalloc %.3f ms, cudaFree %.3f ms (mean of %d)\n",
                mib, map_ms / reps, unmap_ms / reps, malloc_ms / reps, free_ms / reps, reps);
  }
  // Reserve cost (per object ranges would pay it per allocation).
  {
    auto t = std::chrono::steady_clock::now();
    const int reps = 1000;
    for (int i = 0; i < reps; ++i) {
      CUdeviceptr x = 0;
      p_cuMemAddressReserve(&x, size_t{2} << 20, 0, 0, 0);
      p_cuMemAddressFree(x, size_t{2} << 20);
    }
    std::printf("cost reserve+free 2 MiB of addresses: %.4f ms (mean of %d)\n", Ms(t) / reps, reps);
  }
  p_cuMemAddressFree(arena, arena_size);
  std::printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
