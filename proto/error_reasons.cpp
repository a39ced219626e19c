#include "error_reasons.h"

namespace mgb {

using core::ErrorReason;

// Both enums list the reasons in one order: a reason added to one only fails to build.
static_assert(static_cast<int>(core::kLastErrorReason) == v1::ErrorReason_MAX);

v1::ErrorReason WireReason(ErrorReason reason) {
  switch (reason) {
    case ErrorReason::kUnspecified: return v1::ERROR_REASON_UNSPECIFIED;
    case ErrorReason::kUnknownSession: return v1::ERROR_REASON_UNKNOWN_SESSION;
    case ErrorReason::kUnknownTask: return v1::ERROR_REASON_UNKNOWN_TASK;
    case ErrorReason::kInvalidField: return v1::ERROR_REASON_INVALID_FIELD;
    case ErrorReason::kNeverFits: return v1::ERROR_REASON_NEVER_FITS;
    case ErrorReason::kTaskWaiting: return v1::ERROR_REASON_TASK_WAITING;
    case ErrorReason::kGrowPending: return v1::ERROR_REASON_GROW_PENDING;
    case ErrorReason::kDeadline: return v1::ERROR_REASON_DEADLINE;
    case ErrorReason::kCancelled: return v1::ERROR_REASON_CANCELLED;
    case ErrorReason::kSessionEnded: return v1::ERROR_REASON_SESSION_ENDED;
    case ErrorReason::kNoRoom: return v1::ERROR_REASON_NO_ROOM;
    case ErrorReason::kJobGrantExceeded: return v1::ERROR_REASON_JOB_GRANT_EXCEEDED;
    case ErrorReason::kNoJobGrant: return v1::ERROR_REASON_NO_JOB_GRANT;
    case ErrorReason::kPermissionDenied: return v1::ERROR_REASON_PERMISSION_DENIED;
    case ErrorReason::kSlurmDisabled: return v1::ERROR_REASON_SLURM_DISABLED;
    case ErrorReason::kJobEnded: return v1::ERROR_REASON_JOB_ENDED;
    case ErrorReason::kWatcherBehind: return v1::ERROR_REASON_WATCHER_BEHIND;
    case ErrorReason::kLaneVersion: return v1::ERROR_REASON_LANE_VERSION;
    case ErrorReason::kMalformedFrame: return v1::ERROR_REASON_MALFORMED_FRAME;
    case ErrorReason::kUserLimit: return v1::ERROR_REASON_USER_LIMIT;
  }
  return v1::ERROR_REASON_UNSPECIFIED;
}

ErrorReason CoreReason(v1::ErrorReason reason) {
  for (int i = 0; i <= static_cast<int>(core::kLastErrorReason); ++i) {
    if (WireReason(static_cast<ErrorReason>(i)) == reason) return static_cast<ErrorReason>(i);
  }
  return ErrorReason::kUnspecified;
}

std::string ErrorReasonName(const absl::Status &status) {
  return v1::ErrorReason_Name(WireReason(core::ReasonOf(status)));
}

ErrorReason ParseErrorReason(std::string_view name) {
  v1::ErrorReason reason = v1::ERROR_REASON_UNSPECIFIED;
  if (!v1::ErrorReason_Parse(std::string(name), &reason)) return ErrorReason::kUnspecified;
  return CoreReason(reason);
}

}  // namespace mgb
