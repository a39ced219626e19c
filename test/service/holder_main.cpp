// service_test_holder SOCKET BYTES [HOLD_MS ROUNDS]: opens a session, asks for BYTES on a GPU,
// prints "placed" when granted. With two arguments it then sleeps until killed (the SIGKILL
// tests kill it while it holds or waits); with HOLD_MS and ROUNDS it holds each grant HOLD_MS,
// ends it, and asks again, ROUNDS times, then exits 0 (the restart tests: it must finish).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "mgb/client.h"

int main(int argc, char **argv) {
  if (argc != 3 && argc != 5) {
    std::fprintf(stderr, "usage: service_test_holder SOCKET BYTES [HOLD_MS ROUNDS]\n");
    return 2;
  }
  auto client = mgb::Client::Connect(argv[1], getpid(), "holder");
  if (!client.ok()) {
    std::fprintf(stderr, "holder: %s\n", std::string(client.status().message()).c_str());
    return 1;
  }
  const uint64_t bytes = std::strtoull(argv[2], nullptr, 10);
  const int rounds = argc == 5 ? std::atoi(argv[4]) : 1;
  for (int round = 0; round < rounds; ++round) {
    auto placed = (*client)->TaskBegin(bytes, mgb::LaunchShape{}, "hold");
    if (!placed.ok()) {
      std::fprintf(stderr, "holder: %s\n", std::string(placed.status().message()).c_str());
      return 1;
    }
    std::printf("placed\n");
    std::fflush(stdout);
    if (argc == 3) {
      while (true) pause();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(argv[3])));
    if (absl::Status st = (*client)->TaskEnd(placed->task_id); !st.ok()) {
      std::fprintf(stderr, "holder: %s\n", std::string(st.message()).c_str());
      return 1;
    }
  }
  return 0;
}
