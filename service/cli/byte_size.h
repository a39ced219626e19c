// Byte sizes on command lines: "512M", "10G", "100GiB", "1.5T", "4096" (K/M/G/T, with or without
// "B"/"iB", are binary multiples: 10G = 10 GiB, matching what CUDA programs allocate).
#ifndef MGB_SERVICE_CLI_BYTE_SIZE_H
#define MGB_SERVICE_CLI_BYTE_SIZE_H

#include <cstdint>
#include <optional>
#include <string>

namespace mgb::cli {

std::optional<uint64_t> ParseByteSize(const std::string &text);
std::string FormatBytes(uint64_t bytes);  // "1.50 GiB"

}  // namespace mgb::cli

#endif  // MGB_SERVICE_CLI_BYTE_SIZE_H
