// Byte sizes on command lines: "512M", "10G", "100GiB", "1.5T", "4096" (K/M/G/T, with or without
// "B"/"iB", are binary multiples: 10G = 10 GiB, matching what CUDA programs allocate).
#ifndef MGB_SERVICE_CLI_BYTE_SIZE_H
#define MGB_SERVICE_CLI_BYTE_SIZE_H

#include <cstdint>
#include <optional>
#include <string>

#include "mgb/core/gpu.h"

namespace mgb::cli {

std::optional<uint64_t> ParseByteSize(const std::string &text);
using core::FormatBytes;  // "1.50 GiB" (mgb/core/gpu.h: the core's errors use it too)

}  // namespace mgb::cli

#endif  // MGB_SERVICE_CLI_BYTE_SIZE_H
