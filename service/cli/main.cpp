// mgb: the command line of the mgb GPU scheduler. One source file per subcommand; this file is
// only the dispatch table.
#include <cstdio>
#include <cstring>
#include <string>

#include "batch_command.h"
#include "commands.h"
#include "simulate_command.h"

namespace {

struct Command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
};

constexpr Command kCommands[] = {
    {"status", mgb::cli::RunStatusCommand, "show every GPU's memory, warps, tasks and the queue"},
    {"run", mgb::cli::RunRunCommand, "run an unmodified program as one task on a GPU mgbd picks"},
    {"watch", mgb::cli::RunWatchCommand, "print scheduling events as they happen"},
    {"top", mgb::cli::RunTopCommand, "mgb status, live: redrawn every second until q"},
    {"slurm-conf", mgb::cli::RunSlurmConfCommand,
     "print this node's Slurm configuration for mgb (GPU memory GRES, hooks)"},
    {"slurm-hook", mgb::cli::RunSlurmHookCommand,
     "Slurm's Prolog, Epilog and TaskProlog for mgbd (see slurm-conf)"},
    {"batch", RunBatchCommand, "run a list of jobs with N worker slots and record each job"},
    {"simulate", RunSimulateCommand, "simulate a node running mgbd's scheduler over a job trace"},
};

void PrintUsage(std::FILE *out) {
  std::fprintf(out,
               "Usage: mgb COMMAND [FLAGS]   (mgb COMMAND --help for its flags)\n\nCommands:\n");
  for (const Command &c : kCommands) std::fprintf(out, "  %-11s %s\n", c.name, c.summary);
  std::fprintf(
      out, "\nThe daemon's socket comes from --socket or MGB_SOCKET (default /tmp/mgbd.sock).\n");
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
  if (name == "--version") {
    std::printf("mgb %s\n", MGB_VERSION);
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
