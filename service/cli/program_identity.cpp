#include "program_identity.h"

#include <unistd.h>

#include <array>
#include <filesystem>
#include <string_view>

namespace mgb::cli {
namespace {

namespace fs = std::filesystem;

// `name` made absolute from `directory`, symbolic links resolved, when it names a file; else as
// given.
std::string Resolved(const std::string &name, const std::string &directory) {
  std::error_code error;
  const fs::path path = fs::path(name).is_absolute() ? fs::path(name) : fs::path(directory) / name;
  const fs::path real = fs::canonical(path, error);
  return error || !fs::is_regular_file(real, error) ? name : real.string();
}

// The executable execvp would run for `name`.
std::string Executable(const std::string &name, const std::string &path,
                       const std::string &directory) {
  if (name.find('/') != std::string::npos) return Resolved(name, directory);
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = (fs::path(dir) / name).string();
    if (access(candidate.c_str(), X_OK) == 0) return Resolved(candidate, directory);
    start = end + 1;
  }
  return name;
}

// An interpreter's name: python3.12, bash, node... (the word, then digits, dots or dashes).
bool IsInterpreter(std::string_view executable) {
  const std::string_view base = executable.substr(executable.rfind('/') + 1);
  constexpr std::array<std::string_view, 14> kNames = {"python",  "pypy",  "bash", "sh",   "dash",
                                                       "zsh",     "ksh",   "perl", "ruby", "node",
                                                       "Rscript", "julia", "lua",  "php"};
  for (std::string_view name : kNames) {
    if (!base.starts_with(name)) continue;
    const std::string_view rest = base.substr(name.size());
    if (rest.find_first_not_of("0123456789.-") == std::string_view::npos) return true;
  }
  return false;
}

// Python's options that take the next word as their value.
bool TakesValue(std::string_view option) {
  return option == "-W" || option == "-X" || option == "-Q";
}

}  // namespace

ProgramIdentity IdentifyProgram(const std::vector<std::string> &command, const std::string &path,
                                const std::string &directory) {
  ProgramIdentity identity;
  for (const std::string &word : command) {
    identity.arguments += (identity.arguments.empty() ? "" : " ") + word;
  }
  if (command.empty()) return identity;
  identity.program = Executable(command[0], path, directory);
  if (!IsInterpreter(identity.program)) return identity;
  for (size_t i = 1; i < command.size(); ++i) {
    const std::string &word = command[i];
    if (word == "-m" || word == "-c" || word == "-e") {  // a module, or code given inline
      identity.program += " " + word;
      if (i + 1 < command.size()) identity.program += " " + command[i + 1];
      return identity;
    }
    if (word == "--") {
      if (i + 1 < command.size()) identity.program += " " + Resolved(command[i + 1], directory);
      return identity;
    }
    if (word.starts_with("-")) {
      if (TakesValue(word)) ++i;
      continue;
    }
    identity.program += " " + Resolved(word, directory);  // the script
    return identity;
  }
  return identity;
}

}  // namespace mgb::cli
