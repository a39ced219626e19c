#include "job_grant.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace mgb::slurm {

absl::StatusOr<uint64_t> ParseGresCount(std::string_view text) {
  uint64_t value = 0;
  const char *begin = text.data(), *end = text.data() + text.size();
  const auto [rest, error] = std::from_chars(begin, end, value);
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("not a GRES count: \"", std::string(text), "\""));
  };
  if (error != std::errc() || rest == begin) return bad();
  int shift = 0;
  if (rest != end) {
    if (rest + 1 != end) return bad();
    switch (std::toupper(static_cast<unsigned char>(*rest))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      case 'P': shift = 50; break;
      default: return bad();
    }
  }
  if (value > (std::numeric_limits<uint64_t>::max() >> shift)) return bad();
  return value << shift;
}

absl::StatusOr<uint64_t> GpuMemoryPerNode(std::string_view record) {
  // One-line records separate fields with spaces; values here hold none.
  const std::string text(record);
  const std::vector<std::string> fields =
      absl::StrSplit(text, absl::ByAnyChar(" \n"), absl::SkipEmpty());
  for (const std::string &field : fields) {
    constexpr std::string_view kKey = "TresPerNode=";
    if (field.rfind(kKey, 0) != 0) continue;
    // "gres:gpu:1,gres:gpumem:100G" (22.05) or "gres/gpumem:100G", "gres/gpumem=100G" (later).
    const std::vector<std::string> values =
        absl::StrSplit(field.substr(kKey.size()), ',', absl::SkipEmpty());
    for (const std::string &tres : values) {
      std::vector<std::string> parts = absl::StrSplit(tres, absl::ByAnyChar(":/="));
      if (parts.size() < 3 || parts[0] != "gres" || parts[1] != kGresName) continue;
      absl::StatusOr<uint64_t> bytes = ParseGresCount(parts.back());
      if (!bytes.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("TresPerNode: \"", tres, "\": ", bytes.status().message()));
      }
      return *bytes;
    }
    return 0;
  }
  return 0;
}

}  // namespace mgb::slurm
