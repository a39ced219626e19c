#include "service_calls.h"

#include <cstdio>
#include <string>

#include "mgb/core/error_reason.h"
#include "proto_convert.h"

namespace mgb::server {

absl::Status CancelledCall() { return core::Refusal(core::ErrorReason::kCancelled, ""); }

grpc::ServerUnaryReactor *AnswerNow(grpc::CallbackServerContext *context,
                                    const absl::Status &status) {
  grpc::ServerUnaryReactor *answer = context->DefaultReactor();
  answer->Finish(ToGrpc(status, context));
  return answer;
}

void WarnUnlessSaved(const absl::Status &saved, std::atomic<bool> &failing, const char *what) {
  if (saved.ok()) {
    failing = false;
  } else if (!failing.exchange(true)) {
    std::fprintf(stderr, "mgbd: warning: %s are kept in memory only: %s\n", what,
                 std::string(saved.message()).c_str());
  }
}

}  // namespace mgb::server
