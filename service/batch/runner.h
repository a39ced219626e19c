// Runs a job list as child processes with N worker slots: each slot takes the next queued job
// whose arrival time has come (FIFO), and each finished job is recorded with its times, exit,
// out-of-memory death and kernel times. Where jobs go is decided elsewhere: they are
// mgb-nvcc-built programs and ask the mgbd at MGB_SOCKET, whatever policy it runs.
#ifndef MGB_SERVICE_BATCH_RUNNER_H
#define MGB_SERVICE_BATCH_RUNNER_H

#include <csignal>
#include <ostream>
#include <string>
#include <vector>

#include "job_list.h"
#include "job_output.h"

namespace mgb::batch {

struct RunnerOptions {
  int workers = 2;
  std::string socket;    // exported to jobs as MGB_SOCKET when not empty
  std::string log_dir;   // <log_dir>/<job>.out and .err; must exist
  double poll_s = 0.02;  // how often finished children are looked for
  std::ostream* progress = nullptr;                // one line per start/end when set
  const volatile std::sig_atomic_t* stop = nullptr;  // when it turns non-zero: kill jobs, return
};

struct JobRecord {
  Job job;
  double queued_s = 0;    // all times: seconds since the batch started
  double started_s = -1;  // -1: never started
  double ended_s = -1;
  int exit_code = -1;     // when it exited
  int signal = 0;         // when a signal killed it
  bool crashed = false;   // did not exit 0
  bool oom = false;       // crashed, and its output says "out of memory"
  std::string result;     // its MGB_RESULT verdict, if any
  std::vector<KernelTime> kernels;
  std::string stdout_path, stderr_path;

  bool Finished() const { return ended_s >= 0; }
  double KernelMs() const;
};

struct BatchResult {
  std::vector<JobRecord> records;  // in job list order
  double makespan_s = 0;           // batch start to the last job's end
  bool interrupted = false;
};

BatchResult RunBatch(const std::vector<Job>& jobs, const RunnerOptions& options);

}  // namespace mgb::batch

#endif  // MGB_SERVICE_BATCH_RUNNER_H
