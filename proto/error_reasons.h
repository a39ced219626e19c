// An error's reason on the wire (docs/api.md, "Errors"): the core's ErrorReason as mgb.proto's
// and back, and the gRPC trailing-metadata key that carries the value's name (mgbd sends it with
// every refusal; mgb::Client reads it into the absl::Status it returns).
#ifndef MGB_PROTO_ERROR_REASONS_H
#define MGB_PROTO_ERROR_REASONS_H

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "mgb.pb.h"
#include "mgb/core/error_reason.h"

namespace mgb {

inline constexpr char kErrorReasonKey[] = "mgb-error-reason";

v1::ErrorReason WireReason(core::ErrorReason reason);
// A value this build does not know (a newer mgbd's) reads as kUnspecified.
core::ErrorReason CoreReason(v1::ErrorReason reason);

// The trailer's value for a refusal: its reason's name in mgb.proto.
std::string ErrorReasonName(const absl::Status &status);
// A trailer's value back; kUnspecified for a name this build does not know.
core::ErrorReason ParseErrorReason(std::string_view name);

}  // namespace mgb

#endif  // MGB_PROTO_ERROR_REASONS_H
