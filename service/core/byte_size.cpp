#include "mgb/core/byte_size.h"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace mgb::core {

std::optional<uint64_t> ParseByteSize(const std::string &text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == 0) return std::nullopt;
  const std::string number = text.substr(0, i);
  if (number == "." || number.find('.') != number.rfind('.')) return std::nullopt;
  std::string unit = text.substr(i);
  for (char &c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() == 3 && unit.ends_with("IB"))
    unit.resize(1);
  else if (unit.size() == 2 && unit.ends_with("B"))
    unit.resize(1);
  int shift = 0;
  if (unit.empty() || unit == "B")
    shift = 0;
  else if (unit == "K")
    shift = 10;
  else if (unit == "M")
    shift = 20;
  else if (unit == "G")
    shift = 30;
  else if (unit == "T")
    shift = 40;
  else
    return std::nullopt;
  const long double value = std::stold(number) * std::ldexp(1.0L, shift);
  if (!(value >= 0) || value >= 9.0e18L) return std::nullopt;
  if (shift == 0 && number.find('.') != std::string::npos) return std::nullopt;
  return static_cast<uint64_t>(std::llround(value));
}

std::string FormatBytes(uint64_t bytes) {
  static const char *const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", v, kUnits[u]);
  return buf;
}

}  // namespace mgb::core
