// `mgb simulate --nodes N`: every --cluster-policy run over one trace on a cluster of N nodes
// alike, then one table of the figures (cluster_report.h) and, with --out, the reports.
#ifndef MGB_TOOLS_SIM_CLUSTER_COMMAND_H
#define MGB_TOOLS_SIM_CLUSTER_COMMAND_H

#include <string>

#include "absl/status/statusor.h"
#include "job_profile.h"
#include "simulate_flags.h"
#include "simulator.h"

namespace mgb::sim {

// `node`: one node as the flags describe it. The exit status, or the error (exit 2) of an unknown
// cluster policy, a failed simulation or a report that cannot be written.
absl::StatusOr<int> SimulateClusterCommand(const SimulateFlags &flags, const SimOptions &node,
                                           const Trace &trace, const std::string &description,
                                           const std::string &source);

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_CLUSTER_COMMAND_H
