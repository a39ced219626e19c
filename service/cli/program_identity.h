// What mgbd learns a program's memory peak by, for `mgb run` (docs/service.md, "Learned peaks"):
// the program, not its exact command line, since arguments such as an output path, a seed or a run
// name differ from run to run. The program is the executable as found on PATH with symbolic links
// resolved, and for an interpreter (python, bash, node, ...) also the script it runs (resolved the
// same way) or the module (python -m); the whole command line goes along as a hint.
#ifndef MGB_SERVICE_CLI_PROGRAM_IDENTITY_H
#define MGB_SERVICE_CLI_PROGRAM_IDENTITY_H

#include <string>
#include <vector>

namespace mgb::cli {

struct ProgramIdentity {
  std::string program;    // TaskBeginRequest.profile_key
  std::string arguments;  // TaskBeginRequest.profile_arguments: the words joined by spaces
};

// path: $PATH's value; directory: where relative names are resolved from.
ProgramIdentity IdentifyProgram(const std::vector<std::string> &command, const std::string &path,
                                const std::string &directory);

}  // namespace mgb::cli

#endif  // MGB_SERVICE_CLI_PROGRAM_IDENTITY_H
