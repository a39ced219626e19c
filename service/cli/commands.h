// The `mgb` subcommands: each one is `int Run<Name>Command(int argc, char **argv)` where argv[0]
// is "mgb <name>"; it parses its own flags (with --help) and returns the process exit status.
#ifndef MGB_SERVICE_CLI_COMMANDS_H
#define MGB_SERVICE_CLI_COMMANDS_H

namespace mgb::cli {

int RunStatusCommand(int argc, char **argv);     // status_command.cpp
int RunRunCommand(int argc, char **argv);        // run_command.cpp
int RunWatchCommand(int argc, char **argv);      // watch_command.cpp
int RunTopCommand(int argc, char **argv);        // top_command.cpp
int RunSlurmConfCommand(int argc, char **argv);  // slurm_command.cpp
int RunSlurmHookCommand(int argc, char **argv);  // slurm_command.cpp

}  // namespace mgb::cli

#endif  // MGB_SERVICE_CLI_COMMANDS_H
