// Byte sizes for people, both ways: the one parser of sizes on command lines, in files and in
// environment variables (mgb, mgbd, mgb-batch, the simulator, libmgb), and the one formatter.
#ifndef MGB_CORE_BYTE_SIZE_H
#define MGB_CORE_BYTE_SIZE_H

#include <cstdint>
#include <optional>
#include <string>

namespace mgb::core {

// "512M", "10G", "100GiB", "1.5T", "4096": K/M/G/T, with or without "B"/"iB", any case, are binary
// multiples (10G = 10 GiB, as CUDA programs allocate); a bare number is bytes. Empty on anything
// else, on a fraction of a byte, or past 2^63.
std::optional<uint64_t> ParseByteSize(const std::string &text);

// Bytes for people: "1.50 GiB", "528.00 MiB", "4096 B" (binary units). Errors and displays.
std::string FormatBytes(uint64_t bytes);

}  // namespace mgb::core

#endif  // MGB_CORE_BYTE_SIZE_H
