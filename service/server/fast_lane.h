// FastLane: mgbd's side of the fast lane (service/lane/lane_wire.h): TaskBegin and TaskEnd as
// frames on plain connections to mgbd's socket, beside gRPC. The listener hands over each
// connection whose first byte is the lane's; one event-loop thread (epoll) reads every lane
// connection's frames and calls the SchedulerService, whose answers (now, or when the core
// decides) are queued on their connection and sent without blocking.
//
// Why one thread and non-blocking writes: a thread per connection let anyone make mgbd die when
// the kernel refused one more thread (a pids cgroup, RLIMIT_NPROC), and a blocking write to a
// peer that stopped reading held up every decision made after it. Here the thread count does
// not grow with connections, and a peer whose unsent answers pass kMaxQueuedBytes is cut off.
// Sessions stay gRPC's (Attach): a lane call names its session by the same secret as an RPC.
#ifndef MGB_SERVICE_SERVER_FAST_LANE_H
#define MGB_SERVICE_SERVER_FAST_LANE_H

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "lane_wire.h"
#include "scheduler_service.h"

namespace mgb::server {

class FastLane {
 public:
  // Answers a peer has not read, past which its connection is cut (at least one largest frame).
  static constexpr size_t kMaxQueuedBytes = 128 * 1024;
  // A lane connection must send its whole opening (kMagic and a version) by then.
  static constexpr std::chrono::seconds kHelloTimeout{5};

  explicit FastLane(SchedulerService *service);
  ~FastLane() { Stop(); }
  FastLane(const FastLane &) = delete;
  FastLane &operator=(const FastLane &) = delete;

  // Takes the connection (its first bytes are kMagic and a version) and serves it until it ends.
  void Serve(int fd);
  // Ends every lane connection (waiting TaskBegins are withdrawn) and stops the loop thread.
  // Later connections are closed at once. Idempotent.
  void Stop();

  size_t open_connections();

  class Connection;

 private:
  void Loop();
  void ReadFrom(const std::shared_ptr<Connection> &connection);
  // False: the frame ends its connection.
  bool Dispatch(const std::shared_ptr<Connection> &connection, const lane::Frame &frame);
  void EndConnection(const std::shared_ptr<Connection> &connection);  // loop thread only
  void EndStalledOpenings();

  SchedulerService *service_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd: Stop wakes the loop
  std::thread thread_;
  std::mutex mu_;
  std::unordered_map<int, std::shared_ptr<Connection>> open_;  // by descriptor
  bool stopping_ = false;
};

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_FAST_LANE_H
