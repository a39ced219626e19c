// The gRPC side the session client (client.cpp) and the one-shot tool calls (tool_calls.cpp)
// share: mgbd's channel, waiting for it with a reason, statuses with mgbd's reason, and the
// signal mask gRPC's threads must start with.
#ifndef MGB_SERVICE_CLIENT_CLIENT_CHANNEL_H
#define MGB_SERVICE_CLIENT_CLIENT_CHANNEL_H

#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/status.h"

namespace mgb {

// Blocks every asynchronous signal in the calling thread while alive, so that threads started
// meanwhile (ours and gRPC's) inherit a mask that leaves signals to the application.
class BlockSignals {
 public:
  BlockSignals() {
    sigset_t all;
    sigfillset(&all);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT}) sigdelset(&all, sig);
    pthread_sigmask(SIG_BLOCK, &all, &old_);
  }
  ~BlockSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

// A channel to mgbd's socket, with the arguments every mgb client uses.
std::shared_ptr<grpc::Channel> ChannelTo(const std::string &socket_path);

// OK once connected within `timeout`; else why not (no mgbd, or a socket this user may not use).
absl::Status WaitConnected(grpc::Channel &channel, const std::string &socket_path,
                           std::chrono::milliseconds timeout);

// A call's status with the reason mgbd named in its trailing metadata (error_reasons.h).
absl::Status FromGrpc(const grpc::Status &status, const grpc::ClientContext &context);

}  // namespace mgb

#endif  // MGB_SERVICE_CLIENT_CLIENT_CHANNEL_H
