// MetricsEndpoint: mgbd's HTTP endpoint for monitoring (`mgbd --metrics [HOST:]PORT`, loopback
// unless a host is named): GET /metrics answers Prometheus's text format, GET /healthz "ok". One
// thread, one short request per connection: scrapes are rare and small, so no HTTP library.
// The thread serves up to kMaxClients connections at once without blocking on any, and each
// connection has kRequestDeadline in all to send its request and take its answer, so a silent
// or byte-at-a-time client cannot stop /healthz for the others.
#ifndef MGB_SERVICE_SERVER_METRICS_ENDPOINT_H
#define MGB_SERVICE_SERVER_METRICS_ENDPOINT_H

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace mgb::server {

class MetricsEndpoint {
 public:
  static constexpr size_t kMaxClients = 64;  // past it, the oldest connection is dropped
  static constexpr std::chrono::milliseconds kRequestDeadline{2000};
  static constexpr int kBacklog = 128;

  // address: "PORT" (127.0.0.1) or "HOST:PORT" (an IPv4 address or "localhost"); port 0 takes a
  // free one (port() says which). metrics() renders the page for each scrape.
  static absl::StatusOr<std::unique_ptr<MetricsEndpoint>> Start(
      const std::string &address, std::function<std::string()> metrics);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint &) = delete;
  MetricsEndpoint &operator=(const MetricsEndpoint &) = delete;

  int port() const { return port_; }
  const std::string &host() const { return host_; }

 private:
  MetricsEndpoint(int listener, int wake_read, int wake_write, std::string host, int port,
                  std::function<std::string()> metrics);
  struct Client;
  void Serve();
  // The answer to a whole request head.
  std::string Answer(const std::string &request);

  int listener_, wake_read_, wake_write_;
  std::string host_;
  int port_;
  std::function<std::string()> metrics_;
  std::thread thread_;
};

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_METRICS_ENDPOINT_H
