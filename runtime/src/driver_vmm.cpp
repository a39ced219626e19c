#include "driver_vmm.h"

#include "driver_entry.h"

#include <cuda.h>  // types and prototypes only: every call goes through an entry point

namespace mgb::runtime {

struct DriverVmm::EntryPoints {
  decltype(&cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&cuMemAddressReserve) reserve = nullptr;
  decltype(&cuMemAddressFree) free = nullptr;
  decltype(&cuMemCreate) create = nullptr;
  decltype(&cuMemRelease) release = nullptr;
  decltype(&cuMemMap) map = nullptr;
  decltype(&cuMemUnmap) unmap = nullptr;
  decltype(&cuMemSetAccess) set_access = nullptr;
};

namespace {

cudaError_t FromDriver(CUresult result) {
  switch (result) {
    case CUDA_SUCCESS: return cudaSuccess;
    case CUDA_ERROR_OUT_OF_MEMORY: return cudaErrorMemoryAllocation;
    case CUDA_ERROR_NOT_SUPPORTED: return cudaErrorNotSupported;
    case CUDA_ERROR_INVALID_DEVICE: return cudaErrorInvalidDevice;
    default: return cudaErrorInvalidValue;
  }
}

CUmemAllocationProp OnDevice(int device) {
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

}  // namespace

DriverVmm &DriverVmm::Get() {
  static DriverVmm *vmm = new DriverVmm();  // never destroyed: used from atexit handlers
  return *vmm;
}

DriverVmm::DriverVmm() : entry_(new EntryPoints) {
  bool all = LoadDriverEntry("cuMemGetAllocationGranularity", &entry_->granularity) &&
             LoadDriverEntry("cuMemAddressReserve", &entry_->reserve) &&
             LoadDriverEntry("cuMemAddressFree", &entry_->free) &&
             LoadDriverEntry("cuMemCreate", &entry_->create) &&
             LoadDriverEntry("cuMemRelease", &entry_->release) &&
             LoadDriverEntry("cuMemMap", &entry_->map) &&
             LoadDriverEntry("cuMemUnmap", &entry_->unmap) &&
             LoadDriverEntry("cuMemSetAccess", &entry_->set_access);
  if (!all) {
    delete entry_;
    entry_ = nullptr;
  }
}

cudaError_t DriverVmm::Granularity(size_t *bytes) {
  if (entry_ == nullptr) return cudaErrorNotSupported;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices <= 0) return cudaErrorNoDevice;
  // The largest of the GPUs' granularities, so one address layout suits every GPU.
  size_t largest = 0;
  for (int device = 0; device < devices; ++device) {
    CUmemAllocationProp prop = OnDevice(device);
    size_t granularity = 0;
    CUresult result =
        entry_->granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    if (result != CUDA_SUCCESS) return FromDriver(result);
    if (granularity > largest) largest = granularity;
  }
  *bytes = largest;
  return cudaSuccess;
}

cudaError_t DriverVmm::Reserve(size_t bytes, size_t alignment, uintptr_t *address) {
  if (entry_ == nullptr) return cudaErrorNotSupported;
  CUdeviceptr base = 0;
  CUresult result = entry_->reserve(&base, bytes, alignment, 0, 0);
  *address = static_cast<uintptr_t>(base);
  return FromDriver(result);
}

cudaError_t DriverVmm::Free(uintptr_t address, size_t bytes) {
  if (entry_ == nullptr) return cudaErrorNotSupported;
  return FromDriver(entry_->free(static_cast<CUdeviceptr>(address), bytes));
}

cudaError_t DriverVmm::Create(size_t bytes, int device, uint64_t *handle) {
  if (entry_ == nullptr) return cudaErrorNotSupported;
  CUmemAllocationProp prop = OnDevice(device);
  CUmemGenericAllocationHandle made = 0;
  CUresult result = entry_->create(&made, bytes, &prop, 0);
  *handle = static_cast<uint64_t>(made);
  return FromDriver(result);
}

cudaError_t DriverVmm::Release(uint64_t handle) {
  if (entry_ == nullptr) return cudaErrorNotSupported;
  return FromDriver(entry_->release(static_cast<CUmemGenericAllocationHandle>(handle)));
}

cudaError_t DriverVmm::Map(uintptr_t address, size_t bytes, uint64_t handle, int device) {
  if (entry_ == nullptr) return cudaErrorNotSupported;
  CUresult result = entry_->map(static_cast<CUdeviceptr>(address), bytes, 0,
                                static_cast<CUmemGenericAllocationHandle>(handle), 0);
  if (result != CUDA_SUCCESS) return FromDriver(result);
  CUmemAccessDesc access = {};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  result = entry_->set_access(static_cast<CUdeviceptr>(address), bytes, &access, 1);
  if (result != CUDA_SUCCESS) entry_->unmap(static_cast<CUdeviceptr>(address), bytes);
  return FromDriver(result);
}

cudaError_t DriverVmm::Unmap(uintptr_t address, size_t bytes) {
  if (entry_ == nullptr) return cudaErrorNotSupported;
  return FromDriver(entry_->unmap(static_cast<CUdeviceptr>(address), bytes));
}

}  // namespace mgb::runtime
