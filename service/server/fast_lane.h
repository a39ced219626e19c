// FastLane: mgbd's side of the fast lane (service/lane/lane_wire.h): TaskBegin and TaskEnd as
// frames on plain connections to mgbd's socket, beside gRPC. The listener hands over each
// connection whose first byte is the lane's; a thread per connection reads its frames and calls
// the SchedulerService, whose answers (now, or when the core decides) are written back.
// Sessions stay gRPC's (Attach): a lane call names its session by the same secret as an RPC.
#ifndef MGB_SERVICE_SERVER_FAST_LANE_H
#define MGB_SERVICE_SERVER_FAST_LANE_H

#include <condition_variable>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "scheduler_service.h"

namespace mgb::server {

class FastLane {
 public:
  explicit FastLane(SchedulerService *service) : service_(service) {}
  ~FastLane() { Stop(); }
  FastLane(const FastLane &) = delete;
  FastLane &operator=(const FastLane &) = delete;

  // Takes the connection (its first bytes are kMagic and a version) and serves it until it ends.
  void Serve(int fd);
  // Ends every lane connection (waiting TaskBegins are withdrawn) and waits for their threads.
  // Later connections are closed at once.
  void Stop();

  class Connection;

 private:
  void Run(const std::shared_ptr<Connection> &connection);

  SchedulerService *service_;
  std::mutex mu_;
  std::condition_variable all_ended_;
  std::unordered_set<std::shared_ptr<Connection>> open_;
  bool stopping_ = false;
};

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_FAST_LANE_H
