// `mgb simulate`: the command-line entry the `mgb` CLI dispatches to (docs/simulator.md).
#ifndef MGB_TOOLS_SIM_SIMULATE_COMMAND_H
#define MGB_TOOLS_SIM_SIMULATE_COMMAND_H

// argv[0] is "simulate" (or the program name); returns the process exit status:
// 0 success, 1 a check failed (--check-recorded past its tolerance), 2 bad usage or input.
int RunSimulateCommand(int argc, char **argv);

#endif  // MGB_TOOLS_SIM_SIMULATE_COMMAND_H
