// The client's side of the fast lane (service/lane/lane_wire.h): LaneClient, one connection to
// mgbd (not thread-safe), and LanePool, the connections of one session, which mgb::Client uses.
#ifndef MGB_SERVICE_CLIENT_LANE_CLIENT_H
#define MGB_SERVICE_CLIENT_LANE_CLIENT_H

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mgb.pb.h"

namespace mgb {

class LaneClient {
 public:
  using Until = std::optional<std::chrono::steady_clock::time_point>;

  // Connects to mgbd's socket and waits for its hello. UNIMPLEMENTED when the mgbd there does
  // not speak the lane (it is older, or refuses): the caller uses gRPC instead. `program` names
  // the program in the lines that report refused TaskEnds.
  static absl::StatusOr<std::unique_ptr<LaneClient>> Open(const std::string &socket_path,
                                                          const std::string &program,
                                                          std::chrono::milliseconds timeout);
  ~LaneClient();
  LaneClient(const LaneClient &) = delete;
  LaneClient &operator=(const LaneClient &) = delete;

  // Sends a TaskBegin and waits for mgbd's answer (mgbd itself answers DEADLINE_EXCEEDED at the
  // request's deadline; `until` is a safety net). mgbd's refusal comes back with its code.
  absl::StatusOr<v1::TaskBeginReply> Begin(const v1::TaskBeginRequest &request, Until until);
  // Sends a TaskEnd without waiting: mgbd answers only a refusal, printed when read.
  absl::Status SendEnd(const v1::TaskEndRequest &request);
  // Waits until mgbd handled every frame sent before it.
  absl::Status Ping(Until until);

  // TaskEnds sent since mgbd last answered anything on this connection.
  int unconfirmed_ends() const { return unconfirmed_ends_; }
  // After a failed read or write the connection is useless: the pool drops it.
  bool broken() const { return broken_; }

 private:
  LaneClient(int fd, std::string program) : fd_(fd), program_(std::move(program)) {}
  // Reads until the answer to `call`, printing refusals of earlier TaskEnds on the way.
  absl::StatusOr<std::string> AnswerTo(uint32_t call, Until until);

  int fd_;
  uint32_t next_call_ = 1;
  int unconfirmed_ends_ = 0;
  bool broken_ = false;
  const std::string program_;
};

// The fast-lane connections of one session with one mgbd: each TaskBegin borrows a connection
// (opened as needed, so concurrent calls never wait for each other); TaskEnds go in order on one
// connection of their own, and Flush confirms them. Thread-safe.
class LanePool {
 public:
  LanePool(std::string socket_path, std::string program)
      : socket_path_(std::move(socket_path)), program_(std::move(program)) {}

  // Empty when the lane is off (this mgbd has none): the caller uses gRPC.
  std::optional<absl::StatusOr<v1::TaskBeginReply>> Begin(const v1::TaskBeginRequest &request,
                                                          LaneClient::Until until);
  std::optional<absl::Status> End(const v1::TaskEndRequest &request);
  // Waits until mgbd handled every TaskEnd sent so far.
  void Flush(LaneClient::Until until);

 private:
  // A new connection; UNIMPLEMENTED (and the lane off from now on) when mgbd has none.
  absl::StatusOr<std::unique_ptr<LaneClient>> Open();

  const std::string socket_path_;
  const std::string program_;
  std::mutex mu_;
  std::vector<std::unique_ptr<LaneClient>> idle_;
  bool off_ = false;
  std::mutex end_mu_;  // serialises TaskEnds and Flush on end_lane_
  std::unique_ptr<LaneClient> end_lane_;
};

// Whether mgb::Client uses the fast lane: MGB_FAST_LANE=0 turns it off (gRPC for every call).
bool FastLaneWanted();

}  // namespace mgb

#endif  // MGB_SERVICE_CLIENT_LANE_CLIENT_H
