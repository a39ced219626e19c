// service_test_hostile: one hostile local user's behaviour against mgbd, for the soak
// (scripts/soak.py --hostile) and by hand; and `probe`, an honest client timing its decisions.
//
//   service_test_hostile SOCKET lanes K N SECONDS    K lane connections, N TaskBegins each, never
//   read service_test_hostile SOCKET watchers N SECONDS   N Watch streams that never read
//   service_test_hostile SOCKET labels N SECONDS     N tasks with 65,000-byte labels, held
//   service_test_hostile SOCKET restore N            N sessions restoring 100 GiB with forged
//   tokens service_test_hostile SOCKET probe SECONDS        TaskBegin(0)/TaskEnd in a loop; prints
//   each
//                                                    decision's start and microseconds, a line each
// MGB_HOSTILE_UID: become that user first (hostile and honest users are then counted apart).
// Exits 0 unless it could not start; what mgbd refuses is the point, not an error.
#include <grpcpp/create_channel.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "lane_wire.h"
#include "mgb.grpc.pb.h"
#include "mgb/client.h"

namespace {

using Clock = std::chrono::steady_clock;

int Connect(const std::string &socket_path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (connect(fd, reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

mgb::v1::LaunchShape OneWarp() {
  mgb::v1::LaunchShape shape;
  for (mgb::v1::Dim3 *d : {shape.mutable_grid(), shape.mutable_block()}) {
    d->set_x(1);
    d->set_y(1);
    d->set_z(1);
  }
  shape.mutable_block()->set_x(32);
  return shape;
}

void Sleep(int seconds) { std::this_thread::sleep_for(std::chrono::seconds(seconds)); }

int Lanes(const std::string &socket, int connections, int begins, int seconds) {
  auto client = mgb::Client::Connect(socket, getpid(), "hostile-lanes");
  if (!client.ok()) return 1;
  mgb::v1::TaskBeginRequest request;
  request.set_session_id((*client)->session().session_id);
  request.set_memory_bytes(1 << 20);
  *request.mutable_shape() = OneWarp();
  std::vector<int> open;
  for (int c = 0; c < connections; ++c) {
    const int fd = Connect(socket);
    if (fd < 0 || !mgb::lane::WriteHello(fd).ok()) break;
    for (int i = 0; i < begins; ++i) {
      if (!mgb::lane::WriteFrame(fd, static_cast<uint32_t>(i + 1), mgb::lane::Kind::kBegin,
                                 &request)
               .ok()) {
        break;
      }
    }
    open.push_back(fd);  // never read
  }
  Sleep(seconds);
  for (int fd : open) close(fd);
  return 0;
}

int Watchers(const std::string &socket, int count, int seconds) {
  auto channel = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
  auto stub = mgb::v1::Scheduler::NewStub(channel);
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<mgb::v1::Event>>> streams;
  for (int i = 0; i < count; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    streams.push_back(stub->Watch(contexts.back().get(), mgb::v1::WatchRequest()));  // never read
  }
  Sleep(seconds);
  for (auto &context : contexts) context->TryCancel();
  return 0;
}

int Labels(const std::string &socket, int count, int seconds) {
  auto client = mgb::Client::Connect(socket, getpid(), "hostile-labels");
  if (!client.ok()) return 1;
  const std::string label(65000, 'L');
  for (int i = 0; i < count; ++i) {
    (void)(*client)->TaskBegin(1 << 20, mgb::LaunchShape{}, label,
                               std::chrono::system_clock::now() + std::chrono::seconds(1));
  }
  Sleep(seconds);
  return 0;
}

int Restore(const std::string &socket, int count) {
  auto channel = grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials());
  auto stub = mgb::v1::Scheduler::NewStub(channel);
  for (int i = 0; i < count; ++i) {
    mgb::v1::AttachRequest request;
    request.set_pid(getpid());
    request.set_program("hostile-restore");
    mgb::v1::RestoredTask *task = request.add_restore();
    task->set_gpu_index(0);
    task->set_memory_bytes(uint64_t{100} << 30);
    *task->mutable_shape() = OneWarp();
    task->set_token(std::string(32, static_cast<char>(i)));
    grpc::ClientContext context;
    auto stream = stub->Attach(&context, request);
    mgb::v1::SessionEvent event;
    (void)stream->Read(&event);
    context.TryCancel();
  }
  return 0;
}

int Probe(const std::string &socket, int seconds) {
  auto client = mgb::Client::Connect(socket, getpid(), "honest-probe");
  if (!client.ok()) return 1;
  const auto end = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < end) {
    const auto t0 = Clock::now();
    auto placed = (*client)->TaskBegin(0, mgb::LaunchShape{}, "probe",
                                       std::chrono::system_clock::now() + std::chrono::seconds(5));
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
    if (placed.ok()) {
      // When it began (the monotonic clock, which the soak shares) and how long it took.
      std::printf(
          "%lld %lld\n",
          static_cast<long long>(
              std::chrono::duration_cast<std::chrono::microseconds>(t0.time_since_epoch()).count()),
          static_cast<long long>(us.count()));
      std::fflush(stdout);
      (void)(*client)->TaskEnd(placed->task_id);
    } else {
      std::printf("error %s\n", std::string(placed.status().message()).c_str());
      std::fflush(stdout);
      // mgbd restarting: the client reconnects by itself.
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: service_test_hostile SOCKET lanes|watchers|labels|restore|probe ...\n");
    return 2;
  }
  if (const char *uid = std::getenv("MGB_HOSTILE_UID"); uid != nullptr && *uid != '\0') {
    const int id = std::atoi(uid);
    if (setgid(static_cast<gid_t>(id)) != 0 || setuid(static_cast<uid_t>(id)) != 0) {
      std::perror("service_test_hostile: setuid");
      return 2;
    }
  }
  const std::string socket = argv[1], mode = argv[2];
  const auto arg = [&](int i) { return i < argc ? std::atoi(argv[i]) : 0; };
  if (mode == "lanes") return Lanes(socket, arg(3), arg(4), arg(5));
  if (mode == "watchers") return Watchers(socket, arg(3), arg(4));
  if (mode == "labels") return Labels(socket, arg(3), arg(4));
  if (mode == "restore") return Restore(socket, arg(3));
  if (mode == "probe") return Probe(socket, arg(3));
  std::fprintf(stderr, "service_test_hostile: unknown mode %s\n", mode.c_str());
  return 2;
}
