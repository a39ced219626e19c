// Runs a job list as child processes with N worker slots: each slot takes the next queued job
// whose arrival time has come (FIFO, or the longest expected first when run times are known from
// earlier runs: run_history.h), and each finished job is recorded with its times, exit,
// out-of-memory death and kernel times. Where jobs go is decided elsewhere: they are
// mgb-nvcc-built programs and ask the mgbd at MGB_SOCKET, whatever policy it runs.
#ifndef MGB_TOOLS_BATCH_RUNNER_H
#define MGB_TOOLS_BATCH_RUNNER_H

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "host_memory.h"
#include "job_list.h"
#include "job_output.h"

namespace mgb::batch {

// Told when the batch starts and each job's process starts and ends, from the runner's thread
// (e.g. the GPU sampler, to attribute per-process GPU memory to jobs).
class JobWatcher {
 public:
  virtual ~JobWatcher() = default;
  virtual void BatchStarted(std::chrono::steady_clock::time_point start) = 0;
  virtual void JobStarted(size_t job_index, pid_t pid) = 0;
  virtual void JobEnded(size_t job_index) = 0;
};

struct RunnerOptions {
  int workers = 2;
  std::string socket;                // exported to jobs as MGB_SOCKET when not empty
  std::string log_dir;               // <log_dir>/<job>.out and .err; must exist
  double poll_s = 0.02;              // how often finished children are looked for
  std::ostream *progress = nullptr;  // one line per start/end when set
  const volatile std::sig_atomic_t *stop = nullptr;  // when it turns non-zero: kill jobs, return
  JobWatcher *watcher = nullptr;                     // told of starts and ends when set
  // One expected run time per job (seconds, -1 = unknown): when given, the arrived job expected
  // to run longest starts first, unknown ones before known ones; empty: FIFO. Each job also
  // gets MGB_QUEUE_PRIORITY (QueuePriorities), so that an mgbd run with --queue-priority keeps
  // this order in its wait queue when jobs started together race to their first task.
  std::vector<double> expected_s;
  // When set, called on every turn with the seconds since the batch start: the slots from now on
  // (`--workers auto`, adaptive_workers.h), instead of `workers`. Fewer slots stop no job.
  std::function<int(double now_s)> slots;
  // When set, a job starts only when the host has memory for it (host_memory.h); jobs behind a
  // held job wait too, so a large job is not passed over for ever.
  const HostMemoryGate *host_gate = nullptr;
  // Peak host memory per command line (run_history.h's CommandLine) from earlier runs; the
  // runner adds each finished job's own. A job's expected peak is this, else its
  // host_memory_bytes estimate, else unknown (0: only the reserve is asked for).
  std::map<std::string, uint64_t> host_peaks;
};

// GPU memory held by a job's processes (summed over GPUs) at a time since the batch start.
struct MemorySample {
  double t_s = 0;
  uint64_t bytes = 0;
};

// Per job, 1 + the number of jobs expected to end sooner (unknown counts as longest), at most
// 65535: the longer, the higher; equal expectations, equal priorities.
std::vector<uint32_t> QueuePriorities(const std::vector<double> &expected_s);

struct JobRecord {
  Job job;
  double queued_s = 0;    // all times: seconds since the batch started
  double started_s = -1;  // -1: never started
  double ended_s = -1;
  int exit_code = -1;    // when it exited
  int signal = 0;        // when a signal killed it
  bool crashed = false;  // did not exit 0
  bool oom = false;      // crashed, and its output says "out of memory"
  std::string result;    // its MGB_RESULT verdict, if any
  std::vector<KernelTime> kernels;
  bool waits_reported = false;  // libmgb printed MGB_WAIT_MS: time blocked on mgbd, in ms
  double wait_begin_ms = 0, wait_grow_ms = 0;
  std::string stdout_path, stderr_path;
  bool memory_sampled = false;               // per-process memory was observed for this job
  std::vector<MemorySample> memory_samples;  // while it ran; meaningful when memory_sampled
  uint64_t host_peak_bytes = 0;  // its largest resident set (the kernel's ru_maxrss), once ended
  double host_wait_s = 0;        // time the host memory gate held it back

  bool Finished() const { return ended_s >= 0; }
  double KernelMs() const;
  uint64_t PeakMemoryBytes() const;
};

struct BatchResult {
  std::vector<JobRecord> records;  // in job list order
  double makespan_s = 0;           // batch start to the last job's end
  bool interrupted = false;
};

BatchResult RunBatch(const std::vector<Job> &jobs, const RunnerOptions &options);

}  // namespace mgb::batch

#endif  // MGB_TOOLS_BATCH_RUNNER_H
