// Daemon: mgbd assembled from its options (GPU inventory, policy, MPS, socket) and running;
// used by mgbd's main and, in-process, by the tests and the benchmark.
#ifndef MGB_SERVICE_SERVER_DAEMON_H
#define MGB_SERVICE_SERVER_DAEMON_H

#include <grpcpp/server.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "connection_listener.h"
#include "mgb/core/scheduler.h"
#include "scheduler_service.h"

namespace mgb::server {

class FastLane;
class MetricsEndpoint;

struct DaemonOptions {
  std::string socket_path;
  std::string gpus_file;  // empty: the GPUs come from NVML
  std::string policy = "mgb";
  bool mps = false;
  std::string mps_directory = "/tmp/mgb-mps";
  uint64_t context_reserve_bytes = core::kDefaultContextReserve;
  int verbosity = 0;
  ListenerLimits limits;               // connection caps and the handshake timeout
  ClientLimits client_limits;          // what one user may hold (client_limits.h)
  bool spread_tasks = false;           // core::Options::spread_tasks
  int64_t first_run_settle_ms = 5000;  // core::Options::unknown_settle_us, in ms
  int64_t max_slowdown_percent = 0;    // core::Options::max_slowdown_percent (mgb policy only)
  bool queue_priority = false;         // core::Options::queue_priority
  // Found a previous mgbd's socket: new tasks wait this long while its clients re-register.
  std::chrono::milliseconds restore_grace{3000};
  // The restore tokens' key and epoch (restore_tokens.h): a path, "none" (in memory: nothing
  // granted before a restart is restored after it), or "" for mgbd-restore.tsv in the state
  // directory.
  std::string restore_key;
  bool slurm_outside_jobs = false;  // --slurm-outside-jobs
  // Learned peaks (docs/service.md): the file they are kept in; empty: mgbd-profiles.tsv in the
  // socket's directory; "none": in memory only.
  std::string profile_store;
  // What a profiled TaskBegin of memory 0 reserves when no peak was learned for it yet.
  uint64_t run_default_memory = uint64_t{1} << 30;
  // `--metrics`: "[HOST:]PORT" of the HTTP endpoint for Prometheus (loopback by default); empty:
  // none.
  std::string metrics_address;
  // `--slurm` (docs/slurm.md): sessions belong to their process's Slurm job, held to its grant.
  bool slurm = false;
  // The jobs' grants' file; empty: mgbd-slurm-grants.tsv in the socket's directory; "none": in
  // memory only.
  std::string slurm_grants;
  std::string slurm_proc_root = "/proc";  // where processes' jobs are read (tests: a fake /proc)
};

class Daemon {
 public:
  // Everything that can go wrong (bad file, unknown policy, no NVML, unusable socket, MPS
  // missing) is reported here with the flag it concerns.
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(const DaemonOptions &options);
  ~Daemon();

  // Stops accepting calls, ends every stream (sessions close), removes the socket file.
  void Shutdown();
  void Wait() { server_->Wait(); }
  const std::string &socket_path() const { return socket_path_; }
  // The metrics endpoint's port (0: none) and its address for people ("": none).
  int metrics_port() const;
  std::string metrics_url() const;

 private:
  Daemon() = default;
  std::string socket_path_;
  std::unique_ptr<MemoryProbe> probe_;
  std::unique_ptr<ConnectionListener> listener_;
  std::unique_ptr<SchedulerService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<FastLane> lane_;  // destroyed first: its threads call the service
  std::unique_ptr<MetricsEndpoint> metrics_;
  bool shut_down_ = false;
  bool socket_owned_ = true;  // false: systemd passed the socket (and keeps its file)
};

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_DAEMON_H
