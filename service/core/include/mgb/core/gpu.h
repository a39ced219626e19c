// The description of one GPU the scheduler places tasks on, and of a task's launch shape.
#ifndef MGB_SERVICE_CORE_MGB_CORE_GPU_H
#define MGB_SERVICE_CORE_MGB_CORE_GPU_H

#include <cstdint>
#include <cstdio>
#include <string>

#include "mgb/core/byte_size.h"

namespace mgb::core {

// Per-SM hardware limits. Defaults are Hopper's (H100/H200, compute capability 9.0).
struct SmLimits {
  uint32_t max_blocks = 32;
  uint32_t max_warps = 64;
  uint32_t registers = 65536;
  uint32_t shared_bytes = 233472;  // 228 KiB
};

struct GpuSpec {
  std::string name;
  uint64_t memory_bytes = 0;
  uint32_t sms = 0;
  SmLimits sm;
  std::string uuid;        // NVML "GPU-..."; empty for GPUs from a config file
  std::string pci_bus_id;  // empty for GPUs from a config file
  bool has_nvml = false;   // free memory comes from NVML (UpdateDeviceMemory) as well

  uint64_t warp_capacity() const { return uint64_t{sms} * sm.max_warps; }
};

// Products saturate instead of wrapping: a grid of 2^32 x 2^32 x 2^32 blocks must not count as few.
inline uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  uint64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  uint64_t count() const { return SaturatingMul(uint64_t{x} * y, z); }
};

struct LaunchShape {
  Dim3 grid;
  Dim3 block;
  uint32_t registers_per_thread = 0;    // 0 = unknown
  uint32_t shared_bytes_per_block = 0;  // 0 = unknown or none

  uint64_t threads_per_block() const { return block.count(); }
  uint64_t warps_per_block() const { return (threads_per_block() + 31) / 32; }
  uint64_t blocks() const { return grid.count(); }
  // The paper's warp count: ceil(threads per block / 32) x blocks (callers cap it per GPU).
  uint64_t warps() const { return SaturatingMul(warps_per_block(), blocks()); }
};

// CUDA's launch limits (every compute capability from 3.0 on), one place for mgbd (which refuses
// such a shape, naming the axis) and libmgb (which then asks by memory alone and lets the launch
// fail in CUDA, as it would without mgb). Empty when `shape` could launch; else the first
// violation, e.g. "shape.block.z is 128; CUDA allows at most 64". Zero axes are not its business.
inline std::string CudaLaunchLimitViolation(const LaunchShape &shape) {
  struct Axis {
    const char *field;
    uint32_t value, limit;
  };
  const Axis axes[] = {
      {"shape.block.x", shape.block.x, 1024}, {"shape.block.y", shape.block.y, 1024},
      {"shape.block.z", shape.block.z, 64},   {"shape.grid.x", shape.grid.x, 0x7FFFFFFFu},
      {"shape.grid.y", shape.grid.y, 65535},  {"shape.grid.z", shape.grid.z, 65535}};
  for (const Axis &a : axes) {
    if (a.value > a.limit) {
      return std::string(a.field) + " is " + std::to_string(a.value) + "; CUDA allows at most " +
             std::to_string(a.limit);
    }
  }
  if (shape.threads_per_block() > 1024) {
    return "shape.block has " + std::to_string(shape.threads_per_block()) +
           " threads; CUDA allows at most 1024";
  }
  return "";
}

}  // namespace mgb::core

#endif  // MGB_SERVICE_CORE_MGB_CORE_GPU_H
