#include "event_names.h"

#include <cctype>

namespace mgb {

std::string EventKindName(v1::Event::Kind kind) {
  std::string name = v1::Event::Kind_Name(kind);
  for (char &c : name)
    c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace mgb
