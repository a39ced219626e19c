// The grow channel: the guard in a program's process asks `mgb run` (which holds the program's
// mgbd session) for more reservation, over a Unix socket in the run's private directory. Grows
// are rare (allocations within the reservation never use it), so it is one small message each way.
#ifndef MGB_GUARD_CHANNEL_GROW_CHANNEL_H
#define MGB_GUARD_CHANNEL_GROW_CHANNEL_H

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace mgb::guard {

struct GrowAnswer {
  enum Verdict : int32_t {
    kGranted = 0,      // the reservation is now `reserved` bytes
    kRefused = 1,      // never (past --max-mem, or more than any GPU has): out-of-memory
    kUnavailable = 2,  // `mgb run` or mgbd cannot be asked (gone, broken)
    // Not now: the GPU's room is held by programs that all wait to grow there (mgbd's grow
    // liveness), so waiting could last forever. The guard may give host memory instead (spill).
    kNoRoom = 3,
  };
  Verdict verdict = kUnavailable;
  uint64_t reserved = 0;
  std::string message;
};

// `mgb run`'s side: answers each request with handler(missing_bytes, gpu), one at a time, on a
// thread of its own until destroyed. gpu: the run's GPU (CUDA ordinal in the program) to grow on.
class GrowServer {
 public:
  using Handler = std::function<GrowAnswer(uint64_t missing_bytes, uint32_t gpu)>;
  // Null with *error set when DIR/grow.sock cannot be made.
  static std::unique_ptr<GrowServer> Start(const std::string &dir, Handler handler,
                                           std::string *error);
  ~GrowServer();
  GrowServer(const GrowServer &) = delete;
  GrowServer &operator=(const GrowServer &) = delete;

 private:
  GrowServer(int listener, int wake_read, int wake_write, Handler handler);
  void Serve();

  int listener_, wake_read_, wake_write_;
  Handler handler_;
  std::thread thread_;
};

// The guard's side: one connection per process (made again after a fork), one request at a time.
class GrowRequester {
 public:
  explicit GrowRequester(std::string dir) : dir_(std::move(dir)) {}
  ~GrowRequester();
  GrowAnswer Ask(uint64_t missing_bytes, uint32_t gpu);

 private:
  std::mutex mu_;
  std::string dir_;
  int fd_ = -1;
  pid_t owner_ = 0;  // the process fd_ was opened in
};

}  // namespace mgb::guard

#endif  // MGB_GUARD_CHANNEL_GROW_CHANNEL_H
