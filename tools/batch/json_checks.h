// Checks of JSON values the batch tool's files share (job lists, earlier runs).
#ifndef MGB_TOOLS_BATCH_JSON_CHECKS_H
#define MGB_TOOLS_BATCH_JSON_CHECKS_H

#include <cstdint>

#include <nlohmann/json.hpp>

namespace mgb::batch {

// A count of bytes: an integer, not negative (parsed text gives unsigned; a built value may not).
inline bool IsNonNegativeInteger(const nlohmann::json &value) {
  return value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0);
}

}  // namespace mgb::batch

#endif  // MGB_TOOLS_BATCH_JSON_CHECKS_H
