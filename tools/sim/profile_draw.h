// A trace drawn from measured profiles: N jobs, each a copy of a profile picked uniformly at
// random (with replacement), arriving as a Poisson process. Seeded and portable (PortableDraw).
#ifndef MGB_TOOLS_SIM_PROFILE_DRAW_H
#define MGB_TOOLS_SIM_PROFILE_DRAW_H

#include <cstdint>

#include "absl/status/statusor.h"
#include "job_profile.h"

namespace mgb::sim {

struct ProfileDrawOptions {
  size_t jobs = 0;
  uint64_t seed = 1;
  double mean_arrival_gap_s = 0.0;  // 0: all queued at time 0
};

// Job i is named "<profile name>#<i>"; the profiles' own arrival times are ignored. Fails
// (INVALID_ARGUMENT) on no profiles or no jobs.
absl::StatusOr<Trace> DrawFromProfiles(const Trace &profiles, const ProfileDrawOptions &options);

}  // namespace mgb::sim

#endif  // MGB_TOOLS_SIM_PROFILE_DRAW_H
