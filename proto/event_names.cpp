#include "event_names.h"

#include <cctype>
#include <string_view>

namespace mgb {

std::string EventKindName(v1::Event::Kind kind) {
  std::string name = v1::Event::Kind_Name(kind);
  // The values' style-guide prefix names no kind: the printed names stay as they were.
  constexpr std::string_view kPrefix = "KIND_";
  if (std::string_view(name).starts_with(kPrefix)) name.erase(0, kPrefix.size());
  for (char &c : name)
    c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace mgb
