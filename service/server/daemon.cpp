#include "daemon.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "mgb/core/gpu_config.h"
#include "fast_lane.h"
#include "job_grant_file.h"
#include "job_of_process.h"
#include "systemd.h"
#include "metrics_endpoint.h"
#include "prometheus_text.h"
#include "state_file.h"
#include "mps.h"
#include "nvml.h"
#include "unix_socket.h"

namespace mgb::server {
namespace {

constexpr int kMaxRequestBytes = 1 << 20;

class NvmlProbe final : public MemoryProbe {
 public:
  explicit NvmlProbe(std::unique_ptr<nvml::Nvml> nvml) : nvml_(std::move(nvml)) {}
  absl::StatusOr<nvml::DeviceMemory> Memory(uint32_t gpu_index) override {
    return nvml_->Memory(gpu_index);
  }
  nvml::Nvml &nvml() { return *nvml_; }

 private:
  std::unique_ptr<nvml::Nvml> nvml_;
};

// A state file's path from its flag: the flag's value, "" (in memory) for "none", else
// `default_name` in the default state directory (state_file.h), "" when there is none.
std::string StateFilePath(const std::string &flag_value, const std::string &default_directory,
                          const std::string &default_name) {
  if (flag_value == "none") return "";
  if (!flag_value.empty()) return flag_value;
  return default_directory == "-" ? "" : default_directory + default_name;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(const DaemonOptions &options) {
  std::unique_ptr<Daemon> d(new Daemon());
  d->socket_path_ = options.socket_path;

  absl::StatusOr<core::Policy> policy = core::ParsePolicy(options.policy);
  if (!policy.ok())
    return absl::InvalidArgumentError(absl::StrCat("--policy: ", policy.status().message()));

  std::vector<core::GpuSpec> gpus;
  if (!options.gpus_file.empty()) {
    absl::StatusOr<std::vector<core::GpuSpec>> loaded = core::LoadGpuConfig(options.gpus_file);
    if (!loaded.ok())
      return absl::InvalidArgumentError(absl::StrCat("--gpus: ", loaded.status().message()));
    gpus = std::move(*loaded);
  } else {
    absl::StatusOr<std::unique_ptr<nvml::Nvml>> nvml = nvml::Nvml::Load();
    if (!nvml.ok()) return nvml.status();
    absl::StatusOr<std::vector<core::GpuSpec>> listed = (*nvml)->Inventory();
    if (!listed.ok()) return listed.status();
    gpus = std::move(*listed);
    d->probe_ = std::make_unique<NvmlProbe>(std::move(*nvml));
  }

  ServiceOptions service_options;
  // Sessions take their pid and user from the kernel's peer credentials, not the client's word.
  service_options.peer =
      [daemon = d.get()](const std::string &grpc_peer) -> std::optional<PeerIdentity> {
    if (daemon->listener_ == nullptr) return std::nullopt;
    std::optional<PeerCredentials> peer = daemon->listener_->Peer(grpc_peer);
    if (!peer) return std::nullopt;
    return PeerIdentity{peer->pid, peer->uid};
  };
  service_options.verbosity = options.verbosity;
  service_options.limits = options.client_limits;
  std::vector<std::string> warnings;
  std::string state_note, state_directory;
  if (options.profile_store.empty() || options.restore_key.empty() ||
      (options.slurm && options.slurm_grants.empty())) {
    state_directory = DefaultStateDirectory(options.socket_path, UserStateDirectory(), &state_note);
  }
  if (state_directory.empty() && !state_note.empty()) {
    state_directory = "-";  // none to trust: flags that default are kept in memory
    warnings.push_back(state_note + "; learned peaks and job grants are kept in memory only");
  } else if (!state_note.empty()) {
    std::fprintf(stderr, "mgbd: %s\n", state_note.c_str());
  }
  service_options.profiles = std::make_shared<ProfileStore>(
      StateFilePath(options.profile_store, state_directory, "mgbd-profiles.tsv"), &warnings);
  service_options.run_default_memory = options.run_default_memory;
  service_options.restore_tokens = std::make_shared<RestoreTokens>(RestoreTokens::Open(
      StateFilePath(options.restore_key, state_directory, "mgbd-restore.tsv"), &warnings));
  service_options.restore_window = options.restore_grace;
  if (options.slurm) {
    service_options.job_of = [root = options.slurm_proc_root](int64_t pid) {
      return slurm::JobOfProcess(pid, root);
    };
    service_options.job_grants_file =
        StateFilePath(options.slurm_grants, state_directory, "mgbd-slurm-grants.tsv");
    // Jobs that were running when the last mgbd stopped are held to their grants still.
    if (!service_options.job_grants_file.empty()) {
      service_options.job_grants = LoadJobGrants(service_options.job_grants_file, &warnings);
    }
    service_options.hook_uid = geteuid();
    service_options.slurm_outside_jobs = options.slurm_outside_jobs;
  }
  for (const std::string &warning : warnings)
    std::fprintf(stderr, "mgbd: warning: %s\n", warning.c_str());
  service_options.memory_probe = d->probe_.get();
  if (options.mps) {
    absl::StatusOr<MpsDirectories> mps = EnsureMpsControlDaemon(options.mps_directory);
    if (!mps.ok()) return mps.status();
    service_options.mps_pipe_directory = mps->pipe;
  }

  core::Options core_options{*policy, options.context_reserve_bytes};
  core_options.spread_tasks = options.spread_tasks;
  core_options.unknown_settle_us = options.first_run_settle_ms * 1000;
  core_options.max_slowdown_percent = static_cast<uint32_t>(options.max_slowdown_percent);
  core_options.queue_priority = options.queue_priority;
  absl::StatusOr<std::unique_ptr<SchedulerService>> service =
      SchedulerService::Create(std::move(gpus), core_options, std::move(service_options));
  if (!service.ok()) return service.status();
  d->service_ = std::move(*service);

  bool stale = false;
  std::string passed_error;
  absl::StatusOr<int> listen_fd = absl::UnavailableError("no socket");
  if (std::optional<int> passed = InheritedListenSocket(&passed_error)) {
    listen_fd = *passed;  // systemd's (mgbd.socket): it owns the file, mgbd never removes it
    d->socket_owned_ = false;
  } else if (!passed_error.empty()) {
    return absl::FailedPreconditionError("socket activation: " + passed_error);
  } else {
    listen_fd = BindUnixSocket(options.socket_path, &stale);
  }
  if (!listen_fd.ok()) return listen_fd.status();
  if (stale && options.restore_grace.count() > 0) {
    // The last mgbd died or stopped with sessions open: their programs may still hold GPUs and
    // are reconnecting. Nothing new is placed until they had time to re-register.
    d->service_->HoldNewTasks(options.restore_grace);
    std::fprintf(stderr,
                 "mgbd: a previous mgbd's socket was left at %s: new tasks wait %lld ms while its "
                 "clients re-register what they hold\n",
                 options.socket_path.c_str(),
                 static_cast<long long>(options.restore_grace.count()));
  }
  d->listener_ = std::make_unique<ConnectionListener>(*listen_fd, options.limits);
  // No listening port of gRPC's own: the listener accepts and hands connections over.
  // grpc.health.v1.Health answers SERVING while mgbd runs (load balancers, systemd probes).
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.RegisterService(d->service_.get());
  // mgbd's requests are small (a label is cut at 256 bytes): a 4 MB one only costs memory.
  builder.SetMaxReceiveMessageSize(kMaxRequestBytes);
  d->server_ = builder.BuildAndStart();
  if (d->server_ == nullptr) return absl::InternalError("gRPC server failed to start");
  d->lane_ = std::make_unique<FastLane>(d->service_.get());
  d->listener_->Start(d->server_.get(), [lane = d->lane_.get()](int fd) { lane->Serve(fd); });
  if (!options.metrics_address.empty()) {
    SchedulerService *scheduler = d->service_.get();
    auto metrics = MetricsEndpoint::Start(options.metrics_address, [scheduler] {
      v1::StatusReply status;
      scheduler->FillStatus(&status);
      return metrics::PrometheusText(status);
    });
    if (!metrics.ok()) return metrics.status();
    d->metrics_ = std::move(*metrics);
  }
  return d;
}

int Daemon::metrics_port() const { return metrics_ != nullptr ? metrics_->port() : 0; }

std::string Daemon::metrics_url() const {
  if (metrics_ == nullptr) return "";
  return "http://" + metrics_->host() + ":" + std::to_string(metrics_->port()) + "/metrics";
}

void Daemon::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  metrics_.reset();
  listener_->Stop();
  // With sessions open the socket stays: its programs keep what they hold and reconnect, and the
  // next mgbd, finding it, waits for them before placing anything new.
  const size_t sessions = service_->SessionCount();
  // Streams (Attach, Watch) and parked calls never end by themselves: cancel them after 200 ms.
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  lane_->Stop();
  service_->Stop();
  if (sessions == 0 && socket_owned_) unlink(socket_path_.c_str());
}

Daemon::~Daemon() {
  if (server_ != nullptr) Shutdown();
}

}  // namespace mgb::server
