// A small command-line flag parser shared by mgbd and every `mgb` subcommand: --name VALUE or
// --name=VALUE, --help, --version, "--" ends the flags; errors name the command and the flag.
#ifndef MGB_SERVICE_CLI_FLAGS_H
#define MGB_SERVICE_CLI_FLAGS_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mgb::cli {

class FlagParser {
 public:
  // usage: the synopsis line(s) shown first by --help.
  FlagParser(std::string command, std::string usage);

  void String(std::string name, std::string *out, std::string help);
  void Bool(std::string name, bool *out, std::string help);
  void Int(std::string name, int64_t *out, std::string help);
  void Size(std::string name, uint64_t *out, std::string help);  // 512M, 10G, 100GiB, bytes
  // A flag whose value `set` checks and keeps: it returns what is wrong, or nothing.
  void Value(std::string name, std::string value_name, std::string help,
             std::function<std::optional<std::string>(const std::string &)> set);

  // Parses argv[1..argc). Positional arguments and everything after "--" go to *rest (nullptr:
  // positional arguments are an error). Returns an exit code when the command should stop now:
  // 0 after printing --help, 2 after printing an error to stderr.
  std::optional<int> Parse(int argc, char **argv, std::vector<std::string> *rest);

  // The same parse, printing nothing: for libraries that report errors their own way.
  struct Outcome {
    bool help = false;                 // --help or -h was given (parsing stopped there)
    bool version = false;              // --version was given (parsing stopped there)
    std::optional<std::string> error;  // "unknown flag --x", "--n expects a whole number, ..."
  };
  Outcome ParseQuietly(int argc, char **argv, std::vector<std::string> *rest);
  // "COMMAND VERSION", as --version prints it.
  std::string VersionLine() const;
  std::string Help() const;
  // Prints "COMMAND: message" to stderr and returns 2 (for checks made after parsing).
  int Fail(const std::string &message) const;

 private:
  struct Flag {
    std::string name, help, value_name;
    bool takes_value;
    std::function<std::optional<std::string>(const std::string &)> set;  // error or nullopt
  };
  std::string command_, usage_;
  std::vector<Flag> flags_;
};

}  // namespace mgb::cli

#endif  // MGB_SERVICE_CLI_FLAGS_H
