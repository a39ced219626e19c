// UsageReporter: sends TaskUsage to mgbd from a background thread, latest value per task, so that
// a guarded cudaMalloc/cudaFree costs no round trip (measured: ~140 us each when synchronous).
// The thread blocks all signals: the program keeps its own handlers.
#ifndef MGB_RUNTIME_SRC_USAGE_REPORTER_H
#define MGB_RUNTIME_SRC_USAGE_REPORTER_H

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "mgb/client.h"

namespace mgb::runtime {

class UsageReporter {
 public:
  using ClientSource = std::function<std::shared_ptr<Client>()>;
  explicit UsageReporter(ClientSource client) : client_(std::move(client)) {}
  ~UsageReporter() { Stop(); }
  UsageReporter(const UsageReporter &) = delete;
  UsageReporter &operator=(const UsageReporter &) = delete;

  void Report(uint64_t task_id, uint64_t allocated_bytes);
  void Forget(uint64_t task_id);  // the task ended: nothing more to send for it
  void Flush();                   // returns once everything reported so far was sent
  void Stop();                    // sends what is pending, then ends the thread

 private:
  void Loop();

  ClientSource client_;
  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::map<uint64_t, uint64_t> pending_;
  bool sending_ = false, stop_ = false;
  std::thread thread_;
};

}  // namespace mgb::runtime

#endif  // MGB_RUNTIME_SRC_USAGE_REPORTER_H
