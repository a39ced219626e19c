#include "profile_draw.h"

#include "absl/strings/str_cat.h"
#include "portable_draw.h"

namespace mgb::sim {

absl::StatusOr<Trace> DrawFromProfiles(const Trace &profiles, const ProfileDrawOptions &options) {
  if (profiles.jobs.empty()) return absl::InvalidArgumentError("no profiles to draw from");
  if (options.jobs == 0) return absl::InvalidArgumentError("no jobs to draw");
  PortableDraw draw(options.seed);
  Trace trace;
  trace.comment = absl::StrCat(options.jobs, " jobs drawn (seed ", options.seed,
                               ", mean arrival gap ", options.mean_arrival_gap_s, " s) from ",
                               profiles.jobs.size(), " profiles: ", profiles.comment);
  trace.jobs.reserve(options.jobs);
  double arrival = 0.0;
  for (size_t i = 0; i < options.jobs; ++i) {
    JobProfile job = profiles.jobs[draw.Index(profiles.jobs.size())];
    if (options.mean_arrival_gap_s > 0 && i > 0)
      arrival += draw.Exponential(options.mean_arrival_gap_s);
    job.name = absl::StrCat(job.name, "#", i);
    job.arrival_s = arrival;
    trace.jobs.push_back(std::move(job));
  }
  return trace;
}

}  // namespace mgb::sim
