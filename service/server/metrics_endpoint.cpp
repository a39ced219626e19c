#include "metrics_endpoint.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/status/status.h"

namespace mgb::server {
namespace {

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
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listener < 0)
    return absl::UnavailableError(std::string("--metrics: socket: ") + std::strerror(errno));
  const int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(listener, reinterpret_cast<sockaddr *>(&in), sizeof(in)) != 0 ||
      listen(listener, kBacklog) != 0) {
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

struct MetricsEndpoint::Client {
  int fd = -1;
  std::chrono::steady_clock::time_point deadline;
  std::string request;
  std::string reply;  // non-empty once the request head is in
  size_t sent = 0;
};

void MetricsEndpoint::Serve() {
  std::vector<Client> clients;
  const auto drop = [](Client &client) {
    close(client.fd);
    client.fd = -1;
  };
  while (true) {
    const auto now = std::chrono::steady_clock::now();
    std::vector<pollfd> fds = {{wake_read_, POLLIN, 0}, {listener_, POLLIN, 0}};
    int timeout_ms = -1;
    for (const Client &client : clients) {
      fds.push_back({client.fd, static_cast<short>(client.reply.empty() ? POLLIN : POLLOUT), 0});
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(client.deadline - now);
      const int left_ms = static_cast<int>(std::max<int64_t>(left.count(), 0));
      timeout_ms = timeout_ms < 0 ? left_ms : std::min(timeout_ms, left_ms);
    }
    if (poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) break;
    for (size_t i = 0; i < clients.size(); ++i) {
      Client &client = clients[i];
      const short events = fds[i + 2].revents;
      if ((events & POLLIN) != 0) {
        char buffer[1024];
        const ssize_t got = recv(client.fd, buffer, sizeof buffer, MSG_DONTWAIT);
        if (got <= 0 && !(got < 0 && (errno == EAGAIN || errno == EINTR))) {
          drop(client);
          continue;
        }
        if (got > 0) client.request.append(buffer, static_cast<size_t>(got));
        if (client.request.find("\r\n\r\n") != std::string::npos ||
            client.request.size() >= kMaxRequestBytes) {
          client.reply = Answer(client.request);
        }
      } else if ((events & (POLLHUP | POLLERR | POLLNVAL)) != 0) {
        drop(client);
        continue;
      }
      if (!client.reply.empty()) {
        const ssize_t n = send(client.fd, client.reply.data() + client.sent,
                               client.reply.size() - client.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) client.sent += static_cast<size_t>(n);
        if (client.sent == client.reply.size() ||
            (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
          drop(client);
          continue;
        }
      }
      // The deadline covers the whole exchange: a client sending a byte a second gets nothing.
      if (std::chrono::steady_clock::now() >= client.deadline) drop(client);
    }
    clients.erase(std::remove_if(clients.begin(), clients.end(),
                                 [](const Client &client) { return client.fd < 0; }),
                  clients.end());
    if ((fds[1].revents & POLLIN) != 0) {
      for (int fd;
           (fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0;) {
        if (clients.size() >= kMaxClients) {  // the oldest has had the most time
          drop(clients.front());
          clients.erase(clients.begin());
        }
        clients.push_back({fd, std::chrono::steady_clock::now() + kRequestDeadline, {}, {}, 0});
      }
      // EMFILE and friends leave the connection in the backlog: try again shortly, not at once.
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  }
  for (Client &client : clients) drop(client);
}

std::string MetricsEndpoint::Answer(const std::string &request) {
  const std::string line = request.substr(0, request.find("\r\n"));
  if (line.rfind("GET /metrics ", 0) == 0 || line == "GET /metrics") {
    return Response("200 OK", "text/plain; version=0.0.4; charset=utf-8", metrics_());
  }
  if (line.rfind("GET /healthz ", 0) == 0) return Response("200 OK", "text/plain", "ok\n");
  if (line.rfind("GET ", 0) == 0) {
    return Response("404 Not Found", "text/plain", "mgbd serves /metrics and /healthz\n");
  }
  return Response("405 Method Not Allowed", "text/plain", "GET only\n");
}

}  // namespace mgb::server
