// service_test_holder SOCKET BYTES: opens a session, asks for BYTES on a GPU, prints "placed"
// when granted, then sleeps until killed. The SIGKILL tests kill it while it holds or waits.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "mgb/client.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: service_test_holder SOCKET BYTES\n");
    return 2;
  }
  auto client = mgb::Client::Connect(argv[1], getpid(), "holder");
  if (!client.ok()) return 1;
  auto placed = (*client)->TaskBegin(std::strtoull(argv[2], nullptr, 10), mgb::LaunchShape{}, "hold");
  if (!placed.ok()) return 1;
  std::printf("placed\n");
  std::fflush(stdout);
  while (true) pause();
}
