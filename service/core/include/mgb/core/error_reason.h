// Why mgbd refused a call, beside the status code: one value per distinct failure (mgb.proto's
// ErrorReason, same order; docs/api.md, "Errors"). The reason travels inside the absl::Status
// (a payload), so every layer between the check and the wire passes it on unchanged.
#ifndef MGB_CORE_ERROR_REASON_H
#define MGB_CORE_ERROR_REASON_H

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace mgb::core {

enum class ErrorReason {
  kUnspecified = 0,  // not mgbd's refusal (transport, client side), or none sent
  kUnknownSession,
  kUnknownTask,
  kInvalidField,
  kNeverFits,
  kTaskWaiting,
  kGrowPending,
  kDeadline,
  kCancelled,
  kSessionEnded,
  kNoRoom,
  kJobGrantExceeded,
  kNoJobGrant,
  kPermissionDenied,
  kSlurmDisabled,
  kJobEnded,
  kWatcherBehind,
  kLaneVersion,
  kMalformedFrame,
  kUserLimit,
};
inline constexpr ErrorReason kLastErrorReason = ErrorReason::kUserLimit;

// A refusal for `reason`, with the status code that reason always has.
absl::Status Refusal(ErrorReason reason, absl::string_view message);
// `status` (its code and message from elsewhere, such as the wire) carrying `reason`.
absl::Status WithReason(absl::Status status, ErrorReason reason);
// The reason `status` carries; kUnspecified for OK and for a status without one.
ErrorReason ReasonOf(const absl::Status &status);

}  // namespace mgb::core

#endif  // MGB_CORE_ERROR_REASON_H
