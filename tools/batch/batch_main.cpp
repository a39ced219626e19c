// mgb-batch: `mgb batch` as a standalone program (the same code the mgb CLI dispatches to).
#include "batch_command.h"

int main(int argc, char **argv) { return RunBatchCommand(argc, argv); }
