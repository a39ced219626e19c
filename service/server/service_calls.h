// Small pieces the SchedulerService's files share: answering a unary call at once, the status
// of a call its client left, and the warning for a state file that cannot be saved.
#ifndef MGB_SERVICE_SERVER_SERVICE_CALLS_H
#define MGB_SERVICE_SERVER_SERVICE_CALLS_H

#include <grpcpp/grpcpp.h>

#include <atomic>

#include "absl/status/status.h"

namespace mgb::server {

// The status of a call its client cancelled or left (gRPC's own CANCELLED, with a reason).
absl::Status CancelledCall();

// A unary call answered at once, with gRPC's default reactor.
grpc::ServerUnaryReactor *AnswerNow(grpc::CallbackServerContext *context,
                                    const absl::Status &status);

// A failed save of a state file is printed once, until a save works again.
void WarnUnlessSaved(const absl::Status &saved, std::atomic<bool> &failing, const char *what);

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_SERVICE_CALLS_H
