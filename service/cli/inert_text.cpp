#include "inert_text.h"

#include <cstdio>

namespace mgb::cli {

std::string InertText(const std::string &text) {
  std::string out;
  out.reserve(text.size());
  char escape[16];
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const auto next = [&](size_t k) {
      return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0;
    };
    if (byte < 0x20 || byte == 0x7f) {
      std::snprintf(escape, sizeof escape, "\\x%02x", byte);
      out += escape;
    } else if (byte == '\\') {
      out += "\\\\";
    } else if (byte == 0xc2 && next(1) >= 0x80 && next(1) <= 0x9f) {  // U+0080..U+009F
      std::snprintf(escape, sizeof escape, "\\x%02x", next(1));
      out += escape;
      ++i;
    } else if (byte == 0xe2 && ((next(1) == 0x80 && next(2) >= 0xaa && next(2) <= 0xae) ||
                                (next(1) == 0x81 && next(2) >= 0xa6 && next(2) <= 0xa9))) {
      // U+202A..U+202E and U+2066..U+2069: text that prints right to left, or out of order.
      const unsigned low = (next(1) == 0x80 ? 0x00 : 0x40) + (next(2) - 0x80);
      std::snprintf(escape, sizeof escape, "\\u20%02x", low);
      out += escape;
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace mgb::cli
