#include "metrics_endpoint.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"

namespace mgb::server {
namespace {

constexpr int kRequestTimeoutMs = 1000;
constexpr size_t kMaxRequestBytes = 8192;

std::string Response(const std::string &status, const std::string &type, const std::string &body) {
  return "HTTP/1.1 " + status + "\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
         body;
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::Start(
    const std::string &address, std::function<std::string()> metrics) {
  std::string host = "127.0.0.1", port_text = address;
  if (const size_t colon = address.rfind(':'); colon != std::string::npos) {
    host = address.substr(0, colon);
    port_text = address.substr(colon + 1);
  }
  if (host == "localhost") host = "127.0.0.1";
  char *end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  sockaddr_in in{};
  in.sin_family = AF_INET;
  if (port_text.empty() || *end != '\0' || port < 0 || port > 65535 ||
      inet_pton(AF_INET, host.c_str(), &in.sin_addr) != 1) {
    return absl::InvalidArgumentError("--metrics: '" + address +
                                      "' is not PORT or HOST:PORT (an IPv4 address)");
  }
  in.sin_port = htons(static_cast<uint16_t>(port));
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0)
    return absl::UnavailableError(std::string("--metrics: socket: ") + std::strerror(errno));
  const int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(listener, reinterpret_cast<sockaddr *>(&in), sizeof(in)) != 0 ||
      listen(listener, 16) != 0) {
    const std::string error = std::strerror(errno);
    close(listener);
    return absl::UnavailableError("--metrics: cannot listen on " + host + ":" + port_text + ": " +
                                  error);
  }
  socklen_t length = sizeof(in);
  getsockname(listener, reinterpret_cast<sockaddr *>(&in), &length);
  int wake[2];
  if (pipe2(wake, O_CLOEXEC) != 0) {
    close(listener);
    return absl::UnavailableError(std::string("--metrics: pipe: ") + std::strerror(errno));
  }
  return std::unique_ptr<MetricsEndpoint>(new MetricsEndpoint(
      listener, wake[0], wake[1], host, ntohs(in.sin_port), std::move(metrics)));
}

MetricsEndpoint::MetricsEndpoint(int listener, int wake_read, int wake_write, std::string host,
                                 int port, std::function<std::string()> metrics)
    : listener_(listener),
      wake_read_(wake_read),
      wake_write_(wake_write),
      host_(std::move(host)),
      port_(port),
      metrics_(std::move(metrics)) {
  thread_ = std::thread([this] { Serve(); });
}

MetricsEndpoint::~MetricsEndpoint() {
  const char byte = 0;
  (void)!write(wake_write_, &byte, 1);
  thread_.join();
  close(listener_);
  close(wake_read_);
  close(wake_write_);
}

void MetricsEndpoint::Serve() {
  pollfd fds[2] = {{wake_read_, POLLIN, 0}, {listener_, POLLIN, 0}};
  while (true) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents != 0) return;
    const int connection = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    Answer(connection);
    close(connection);
  }
}

void MetricsEndpoint::Answer(int connection) {
  // Read the request head (a slow or silent client gets nothing after a second).
  std::string request;
  char buffer[1024];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < kMaxRequestBytes) {
    pollfd in = {connection, POLLIN, 0};
    if (poll(&in, 1, kRequestTimeoutMs) <= 0) return;
    const ssize_t got = recv(connection, buffer, sizeof(buffer), 0);
    if (got <= 0) return;
    request.append(buffer, static_cast<size_t>(got));
  }
  const std::string line = request.substr(0, request.find("\r\n"));
  std::string reply;
  if (line.rfind("GET /metrics ", 0) == 0 || line == "GET /metrics") {
    reply = Response("200 OK", "text/plain; version=0.0.4; charset=utf-8", metrics_());
  } else if (line.rfind("GET /healthz ", 0) == 0) {
    reply = Response("200 OK", "text/plain", "ok\n");
  } else if (line.rfind("GET ", 0) == 0) {
    reply = Response("404 Not Found", "text/plain", "mgbd serves /metrics and /healthz\n");
  } else {
    reply = Response("405 Method Not Allowed", "text/plain", "GET only\n");
  }
  for (size_t sent = 0; sent < reply.size();) {
    const ssize_t n = send(connection, reply.data() + sent, reply.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

}  // namespace mgb::server
