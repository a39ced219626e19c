// Reads GPU descriptions from mgbd's --gpus JSON file:
//   {"gpus": [{"name": "g0", "memory_bytes": 17179869184, "sms": 132,
//              "max_blocks_per_sm": 32, "max_warps_per_sm": 64,
//              "registers_per_sm": 65536, "shared_bytes_per_sm": 233472}]}
// The per-SM limits are optional (Hopper's by default). Errors name the file and the field.
#ifndef MGB_SERVICE_CORE_MGB_CORE_GPU_CONFIG_H
#define MGB_SERVICE_CORE_MGB_CORE_GPU_CONFIG_H

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mgb/core/gpu.h"

namespace mgb::core {

absl::StatusOr<std::vector<GpuSpec>> ParseGpuConfig(const std::string &json_text,
                                                    const std::string &source_name);
absl::StatusOr<std::vector<GpuSpec>> LoadGpuConfig(const std::string &path);

}  // namespace mgb::core

#endif  // MGB_SERVICE_CORE_MGB_CORE_GPU_CONFIG_H
