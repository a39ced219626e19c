// A Slurm job's GPU memory grant on one node, read from `scontrol show job -d -o JOB`: the job
// asked `--gres=gpumem:SIZE`, which Slurm keeps per node as "TresPerNode=gres:gpumem:SIZE"
// (docs/slurm.md, "Why a gpumem GRES").
#ifndef MGB_SERVICE_SLURM_JOB_GRANT_H
#define MGB_SERVICE_SLURM_JOB_GRANT_H

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace mgb::slurm {

inline constexpr std::string_view kGresName = "gpumem";

// The bytes of gpumem per node in one `scontrol show job -o` record; 0 when the job asked for
// none. INVALID_ARGUMENT naming the field when the record has no TresPerNode-style value that
// parses (e.g. "gres:gpumem:lots").
absl::StatusOr<uint64_t> GpuMemoryPerNode(std::string_view scontrol_record);

// A GRES count as Slurm writes it: a number with an optional K/M/G/T/P suffix (powers of 1024).
absl::StatusOr<uint64_t> ParseGresCount(std::string_view text);

}  // namespace mgb::slurm

#endif  // MGB_SERVICE_SLURM_JOB_GRANT_H
