// `mgb batch`: runs a job list with N worker slots and records each job (see runner.h), or with
// --generate writes a job list in the paper's workload shapes (see mix_generator.h).
#ifndef MGB_TOOLS_BATCH_BATCH_COMMAND_H
#define MGB_TOOLS_BATCH_BATCH_COMMAND_H

// argv[0] is the subcommand's name ("batch"); returns the process exit status:
// 0 all jobs exited 0, 1 some job crashed or failed its check, 2 bad usage or input.
int RunBatchCommand(int argc, char **argv);

#endif  // MGB_TOOLS_BATCH_BATCH_COMMAND_H
