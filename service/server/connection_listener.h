// ConnectionListener: mgbd's own accept loop on its Unix socket, in front of gRPC.
//
// gRPC 1.51's listener gives up for good after an accept error such as EMFILE (mgbd stays alive
// but deaf), never closes a connection that says nothing, and cannot tell who is calling. Here
// mgbd accepts each connection itself: it backs off and retries on accept errors, refuses
// connections past per-user and overall caps (so the descriptor limit is never reached), closes
// connections that send nothing within the handshake timeout, records each peer's kernel
// credentials (SO_PEERCRED), and only then hands the connection to gRPC, or to the fast lane
// when its first byte is the lane's (service/lane/lane_wire.h).
#ifndef MGB_SERVICE_SERVER_CONNECTION_LISTENER_H
#define MGB_SERVICE_SERVER_CONNECTION_LISTENER_H

#include <grpcpp/server.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "absl/status/statusor.h"

namespace mgb::server {

// Who is at the other end of a connection, as the kernel says (not as the client claims).
struct PeerCredentials {
  int64_t pid = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
};

struct ListenerLimits {
  // A program uses three: its session (gRPC), a fast-lane connection for TaskBegins (one more per
  // TaskBegin it has waiting at once) and one for its TaskEnds.
  size_t max_connections = 12288;  // overall; lowered to fit the descriptor limit
  size_t max_connections_per_user = 3072;
  std::chrono::milliseconds handshake_timeout{5000};  // a connection must speak by then
};

class ConnectionListener {
 public:
  // Takes a bound, listening socket (BindUnixSocket). Caps are checked against the process's
  // descriptor limit: a reserve is kept for everything else mgbd opens.
  ConnectionListener(int listen_fd, ListenerLimits limits);
  ~ConnectionListener();
  ConnectionListener(const ConnectionListener &) = delete;
  ConnectionListener &operator=(const ConnectionListener &) = delete;

  // Starts the accept thread; accepted connections go to `server` (started, no ports of its own),
  // or to `lane` (which takes the descriptor) when they open as fast-lane connections.
  void Start(grpc::Server *server, std::function<void(int fd)> lane = nullptr);
  // Stops accepting and closes the listening socket; connections already handed over stay
  // gRPC's. Idempotent.
  void Stop();

  // The credentials of the connection gRPC names `grpc_peer` ("fd:N"), while it is open.
  std::optional<PeerCredentials> Peer(const std::string &grpc_peer) const;

  size_t max_connections() const { return limits_.max_connections; }
  // Connections refused since the start (caps reached): for tests and the log.
  uint64_t refused() const { return refused_.load(); }

 private:
  struct Connection {
    PeerCredentials peer;
    uint64_t inode = 0;  // the socket's inode: the descriptor number may be reused after close
  };
  struct Pending {
    int fd = -1;
    Connection connection;
    std::chrono::steady_clock::time_point since;
  };

  void AcceptLoop();
  void AcceptOne(std::vector<Pending> *pending);
  bool Admit(const PeerCredentials &peer);  // under mu_: prunes closed connections when needed
  void PruneClosed();                       // under mu_
  void HandOver(const Pending &p);

  int listen_fd_;
  int wake_pipe_[2] = {-1, -1};
  ListenerLimits limits_;
  grpc::Server *server_ = nullptr;
  std::function<void(int fd)> lane_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> refused_{0};
  std::chrono::steady_clock::time_point last_refusal_log_{};

  mutable std::mutex mu_;
  std::unordered_map<int, Connection> connections_;  // by descriptor, handed to gRPC
};

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_CONNECTION_LISTENER_H
