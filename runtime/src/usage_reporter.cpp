#include "usage_reporter.h"

#include <pthread.h>
#include <signal.h>

namespace mgb::runtime {

void UsageReporter::Report(uint64_t task_id, uint64_t allocated_bytes) {
  std::lock_guard lock(mu_);
  if (stop_) return;
  pending_[task_id] = allocated_bytes;
  if (!thread_.joinable()) {
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);  // inherited by the new thread
    thread_ = std::thread([this] { Loop(); });
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }
  wake_.notify_one();
}

void UsageReporter::Forget(uint64_t task_id) {
  std::lock_guard lock(mu_);
  pending_.erase(task_id);
}

void UsageReporter::Flush() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [&] { return (pending_.empty() && !sending_) || !thread_.joinable(); });
}

void UsageReporter::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void UsageReporter::Loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !pending_.empty(); });
    if (pending_.empty() && stop_) break;
    auto [task_id, bytes] = *pending_.begin();
    pending_.erase(pending_.begin());
    sending_ = true;
    lock.unlock();
    if (std::shared_ptr<Client> client = client_()) (void)client->TaskUsage(task_id, bytes);
    lock.lock();
    sending_ = false;
    if (pending_.empty()) idle_.notify_all();
  }
  idle_.notify_all();
}

}  // namespace mgb::runtime
