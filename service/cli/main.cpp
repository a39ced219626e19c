// mgb: the command line of the mgb GPU scheduler. One source file per subcommand; this file is
// only the dispatch table.
#include <cstdio>
#include <cstring>
#include <string>

#include "commands.h"

// ---- Subcommands provided elsewhere (plugged in by the lead) ---------------------------------
// `mgb batch` (service/batch/) and `mgb simulate` (service/sim/) declare, outside any namespace:
//   int RunBatchCommand(int argc, char **argv);
//   int RunSimulateCommand(int argc, char **argv);
// To plug one in: declare it here, add its row to kCommands below, and add its library to the
// `mgb` target in service/CMakeLists.txt.

namespace {

struct Command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
};

constexpr Command kCommands[] = {
    {"status", mgb::cli::RunStatusCommand, "show every GPU's memory, warps, tasks and the queue"},
    {"run", mgb::cli::RunRunCommand, "run an unmodified program as one task on a GPU mgbd picks"},
    // {"batch", RunBatchCommand, "..."},        <- service/batch/ plugs in here
    // {"simulate", RunSimulateCommand, "..."},  <- service/sim/ plugs in here
};

void PrintUsage(std::FILE *out) {
  std::fprintf(out, "Usage: mgb COMMAND [FLAGS]   (mgb COMMAND --help for its flags)\n\nCommands:\n");
  for (const Command &c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out,
               "\nThe daemon's socket comes from --socket or MGB_SOCKET (default /tmp/mgbd.sock).\n");
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    PrintUsage(stdout);
    return 0;
  }
  for (const Command &c : kCommands) {
    if (name != c.name) continue;
    std::string program = std::string("mgb ") + c.name;
    argv[1] = program.data();  // the subcommand sees itself as argv[0]
    return c.run(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "mgb: unknown command '%s'\n\n", name.c_str());
  PrintUsage(stderr);
  return 2;
}
