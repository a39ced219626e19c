// The NVIDIA MPS control daemon for mgbd --mps: checked, or started with its pipe and log
// directories under one directory mgbd chooses, so clients can be told the pipe directory.
#ifndef MGB_SERVICE_SERVER_MPS_H
#define MGB_SERVICE_SERVER_MPS_H

#include <string>

#include "absl/status/statusor.h"

namespace mgb::server {

struct MpsDirectories {
  std::string pipe;  // CUDA_MPS_PIPE_DIRECTORY, given to clients
  std::string log;   // CUDA_MPS_LOG_DIRECTORY
};

// Under `base`: base/pipe and base/log. Starts `nvidia-cuda-mps-control -d` unless a control
// daemon already answers on base/pipe. FAILED_PRECONDITION naming the program when it is missing.
absl::StatusOr<MpsDirectories> EnsureMpsControlDaemon(const std::string &base);

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_MPS_H
