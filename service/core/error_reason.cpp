#include "mgb/core/error_reason.h"

#include <string>

#include "absl/strings/numbers.h"

namespace mgb::core {
namespace {

// The payload's key; its value is the reason's number in decimal.
constexpr char kPayloadKey[] = "mgb-error-reason";

absl::StatusCode CodeOf(ErrorReason reason) {
  switch (reason) {
    case ErrorReason::kUnknownSession:
    case ErrorReason::kUnknownTask: return absl::StatusCode::kNotFound;
    case ErrorReason::kInvalidField:
    case ErrorReason::kNeverFits:
    case ErrorReason::kMalformedFrame: return absl::StatusCode::kInvalidArgument;
    case ErrorReason::kTaskWaiting:
    case ErrorReason::kGrowPending:
    case ErrorReason::kSlurmDisabled:
    case ErrorReason::kLaneVersion: return absl::StatusCode::kFailedPrecondition;
    case ErrorReason::kDeadline: return absl::StatusCode::kDeadlineExceeded;
    case ErrorReason::kCancelled:
    case ErrorReason::kSessionEnded: return absl::StatusCode::kCancelled;
    case ErrorReason::kNoRoom:
    case ErrorReason::kJobGrantExceeded:
    case ErrorReason::kNoJobGrant:
    case ErrorReason::kWatcherBehind:
    case ErrorReason::kUserLimit: return absl::StatusCode::kResourceExhausted;
    case ErrorReason::kPermissionDenied: return absl::StatusCode::kPermissionDenied;
    case ErrorReason::kJobEnded: return absl::StatusCode::kAborted;
    case ErrorReason::kUnspecified: break;
  }
  return absl::StatusCode::kUnknown;
}

}  // namespace

absl::Status Refusal(ErrorReason reason, absl::string_view message) {
  return WithReason(absl::Status(CodeOf(reason), message), reason);
}

absl::Status WithReason(absl::Status status, ErrorReason reason) {
  if (!status.ok() && reason != ErrorReason::kUnspecified) {
    status.SetPayload(kPayloadKey, absl::Cord(std::to_string(static_cast<int>(reason))));
  }
  return status;
}

ErrorReason ReasonOf(const absl::Status &status) {
  const auto payload = status.GetPayload(kPayloadKey);
  int value = 0;
  if (!payload || !absl::SimpleAtoi(std::string(*payload), &value) || value < 0 ||
      value > static_cast<int>(kLastErrorReason)) {
    return ErrorReason::kUnspecified;
  }
  return static_cast<ErrorReason>(value);
}

}  // namespace mgb::core
