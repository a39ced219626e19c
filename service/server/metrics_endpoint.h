// MetricsEndpoint: mgbd's HTTP endpoint for monitoring (`mgbd --metrics [HOST:]PORT`, loopback
// unless a host is named): GET /metrics answers Prometheus's text format, GET /healthz "ok". One
// thread, one short request per connection: scrapes are rare and small, so no HTTP library.
#ifndef MGB_SERVICE_SERVER_METRICS_ENDPOINT_H
#define MGB_SERVICE_SERVER_METRICS_ENDPOINT_H

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace mgb::server {

class MetricsEndpoint {
 public:
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
  void Serve();
  void Answer(int connection);

  int listener_, wake_read_, wake_write_;
  std::string host_;
  int port_;
  std::function<std::string()> metrics_;
  std::thread thread_;
};

}  // namespace mgb::server

#endif  // MGB_SERVICE_SERVER_METRICS_ENDPOINT_H
