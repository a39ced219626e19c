// Can the guard give a program host-backed memory in place of device memory it cannot have
// (docs/frameworks.md, "Spill")? Measures, on the GPU machine, for the two ways programs allocate:
// 1. cuMemAlloc's stand-in: managed memory preferring the host and mapped for the device
//    (cuMemAdvise): does a kernel read and write it, and does it take no device memory?
// 2. cuMemCreate's stand-in (PyTorch's expandable segments): physical memory on the host
//    (CU_MEM_LOCATION_TYPE_HOST_NUMA / _HOST_NUMA_CURRENT / _HOST) mapped with cuMemMap and
//    made device-accessible with cuMemSetAccess, as the program itself would.
// Build: nvcc -O2 -o spill_probe spill_probe.cu -lcuda. Run: ./spill_probe [GiB].
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                      \
  do {                                                   \
    CUresult r_ = (call);                                \
    if (r_ != CUDA_SUCCESS) {                            \
      const char *n_ = nullptr;                          \
      cuGetErrorName(r_, &n_);                           \
      std::printf("  %s -> %s\n", #call, n_ ? n_ : "?"); \
      return false;                                      \
    }                                                    \
  } while (0)

__global__ void Fill(unsigned *p, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = static_cast<unsigned>(i * 2654435761u);
}
__global__ void Sum(const unsigned *p, size_t n, unsigned long long *out) {
  unsigned long long s = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    s += p[i];
  atomicAdd(out, s);
}

size_t FreeBytes() {
  size_t free = 0, total = 0;
  cuMemGetInfo(&free, &total);
  return free;
}

// Fills and sums n words on the device; true when the sum is right. Prints time and GB/s.
bool Exercise(CUdeviceptr p, size_t bytes, const char *what) {
  const size_t n = bytes / 4;
  unsigned long long *sum = nullptr, expected = 0;
  cudaMallocManaged(&sum, sizeof *sum);
  *sum = 0;
  for (size_t i = 0; i < n; ++i) expected += static_cast<unsigned>(i * 2654435761u);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a);
  Fill<<<1024, 256>>>(reinterpret_cast<unsigned *>(p), n);
  Sum<<<1024, 256>>>(reinterpret_cast<unsigned *>(p), n, sum);
  cudaEventRecord(b);
  const cudaError_t e = cudaDeviceSynchronize();
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  std::printf("  %s: kernels %s, sum %s, %.1f ms for 2 passes (%.1f GB/s)\n", what,
              cudaGetErrorString(e), *sum == expected ? "right" : "WRONG", ms,
              2.0 * bytes / (ms * 1e6));
  const bool ok = e == cudaSuccess && *sum == expected;
  cudaFree(sum);
  return ok;
}

bool Managed(size_t bytes, CUdevice dev) {
  std::printf("1. managed memory, preferred on the host, accessed by the device\n");
  const size_t before = FreeBytes();
  CUdeviceptr p = 0;
  CHECK(cuMemAllocManaged(&p, bytes, CU_MEM_ATTACH_GLOBAL));
  CUmemLocation host = {CU_MEM_LOCATION_TYPE_HOST, 0}, gpu = {CU_MEM_LOCATION_TYPE_DEVICE, dev};
  CHECK(cuMemAdvise(p, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host));
  CHECK(cuMemAdvise(p, bytes, CU_MEM_ADVISE_SET_ACCESSED_BY, gpu));
  const bool ok = Exercise(p, bytes, "managed");
  const size_t after = FreeBytes();
  std::printf("  device memory taken: %.3f GiB of %.3f GiB\n",
              (double)(before > after ? before - after : 0) / (1 << 30), (double)bytes / (1 << 30));
  CHECK(cuMemFree(p));
  std::printf("RESULT managed %s device_taken_gib %.3f\n", ok ? "ok" : "FAILED",
              (double)(before > after ? before - after : 0) / (1 << 30));
  return ok;
}

bool Created(size_t bytes, CUdevice dev, CUmemLocationType type, const char *name) {
  std::printf("2. cuMemCreate on %s, mapped for the device\n", name);
  const size_t before = FreeBytes();
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = type;
  prop.location.id = 0;
  size_t granularity = 0;
  CHECK(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  const size_t size = (bytes + granularity - 1) / granularity * granularity;
  std::printf("  granularity %zu\n", granularity);
  CUmemGenericAllocationHandle handle;
  CHECK(cuMemCreate(&handle, size, &prop, 0));
  CUdeviceptr p = 0;
  CHECK(cuMemAddressReserve(&p, size, 0, 0, 0));
  CHECK(cuMemMap(p, size, 0, handle, 0));
  CUmemAccessDesc access = {};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  CHECK(cuMemSetAccess(p, size, &access, 1));
  const bool ok = Exercise(p, bytes, name);
  const size_t after = FreeBytes();
  std::printf("  device memory taken: %.3f GiB\n",
              (double)(before > after ? before - after : 0) / (1 << 30));
  CHECK(cuMemUnmap(p, size));
  CHECK(cuMemAddressFree(p, size));
  CHECK(cuMemRelease(handle));
  std::printf("RESULT create_%s %s\n", name, ok ? "ok" : "FAILED");
  return ok;
}

int main(int argc, char **argv) {
  const double gib = argc > 1 ? std::atof(argv[1]) : 2.0;
  const size_t bytes = static_cast<size_t>(gib * (1 << 30));
  cudaFree(0);
  CUdevice dev;
  cuCtxGetDevice(&dev);
  int numa = -1, host_numa_vmm = -1;
  cuDeviceGetAttribute(&numa, CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID, dev);
  cuDeviceGetAttribute(&host_numa_vmm,
                       CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev);
  std::printf("device %d: host NUMA id %d, host NUMA VMM supported %d\n", dev, numa, host_numa_vmm);
  // Device memory, for comparison.
  CUdeviceptr d = 0;
  if (cuMemAlloc(&d, bytes) == CUDA_SUCCESS) {
    Exercise(d, bytes, "device memory");
    cuMemFree(d);
  }
  Managed(bytes, dev);
  Created(bytes, dev, CU_MEM_LOCATION_TYPE_HOST_NUMA, "host_numa");
  Created(bytes, dev, CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT, "host_numa_current");
  Created(bytes, dev, CU_MEM_LOCATION_TYPE_HOST, "host");
  return 0;
}
