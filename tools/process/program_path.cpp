#include "program_path.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace mgb::batch {

std::string ResolveProgram(const std::string &name) {
  if (name.find('/') != std::string::npos) return name;
  const char *path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

}  // namespace mgb::batch
