#include "runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>
#include <string_view>
#include <thread>

#include "mgb/core/byte_size.h"
#include "program_path.h"
#include "run_history.h"

namespace mgb::batch {
namespace {

using Clock = std::chrono::steady_clock;

std::string ReadFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A file-system-safe version of a job name for its log files.
std::string LogStem(const std::string &name) {
  std::string stem = name;
  for (char &c : stem)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
  return stem;
}

// errno as words, for the child between fork and exec (strerror is not async-signal-safe).
const char *ErrnoText(int error) {
  switch (error) {
    case ENOENT: return "No such file or directory";
    case EACCES: return "Permission denied";
    case ENOEXEC: return "Exec format error";
    case ENOTDIR: return "Not a directory";
    case ELOOP: return "Too many levels of symbolic links";
    case ENAMETOOLONG: return "File name too long";
    case E2BIG: return "Argument list too long";
    case ENOMEM: return "Cannot allocate memory";
    case ETXTBSY: return "Text file busy";
    default: return "exec failed";
  }
}

// The environment for a job with a queue priority: this one, MGB_QUEUE_PRIORITY replaced.
std::vector<std::string> EnvironmentWith(uint32_t queue_priority) {
  std::vector<std::string> env;
  for (char **e = environ; *e != nullptr; ++e) {
    if (!std::string_view(*e).starts_with("MGB_QUEUE_PRIORITY=")) env.emplace_back(*e);
  }
  env.push_back("MGB_QUEUE_PRIORITY=" + std::to_string(queue_priority));
  return env;
}

// Starts the job in its own process group (so a stop can kill its whole tree); a queue priority
// above 0 goes into its environment.
pid_t Launch(JobRecord &r, const RunnerOptions &options, uint32_t queue_priority) {
  r.stdout_path = options.log_dir + "/" + LogStem(r.job.name) + ".out";
  r.stderr_path = options.log_dir + "/" + LogStem(r.job.name) + ".err";
  std::vector<char *> argv;
  for (std::string &a : r.job.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string program = r.job.argv.empty() ? std::string() : ResolveProgram(r.job.argv[0]);
  std::vector<std::string> env_text;
  std::vector<char *> env;
  if (queue_priority > 0) {
    env_text = EnvironmentWith(queue_priority);
    for (std::string &e : env_text) env.push_back(e.data());
    env.push_back(nullptr);
  }
  pid_t pid = fork();
  if (pid != 0) return pid;  // parent (or -1)
  // From here until exec only async-signal-safe calls: the parent may have other threads.
  setpgid(0, 0);
  int out = open(r.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int err = open(r.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0 || err < 0) _exit(126);
  dup2(out, STDOUT_FILENO);
  dup2(err, STDERR_FILENO);
  close(out);
  close(err);
  if (env.empty()) {
    execv(program.c_str(), argv.data());
  } else {
    execve(program.c_str(), argv.data(), env.data());
  }
  const char *parts[] = {"mgb batch: cannot run '", argv[0] != nullptr ? argv[0] : "",
                         "': ", ErrnoText(errno), "\n"};
  for (const char *part : parts) {
    ssize_t ignored = write(STDERR_FILENO, part, strlen(part));
    (void)ignored;
  }
  _exit(127);
}

void Complete(JobRecord &r, int status, const rusage &usage, double now) {
  r.ended_s = now;
  r.host_peak_bytes = static_cast<uint64_t>(std::max(0L, usage.ru_maxrss)) * 1024;  // KiB
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  r.crashed = !(WIFEXITED(status) && r.exit_code == 0);
  JobOutput output = ParseJobOutput(ReadFile(r.stdout_path), ReadFile(r.stderr_path));
  r.kernels = output.kernels;
  r.waits_reported = output.waits_reported;
  r.wait_begin_ms = output.wait_begin_ms;
  r.wait_grow_ms = output.wait_grow_ms;
  r.result = output.result;
  r.oom = r.crashed && output.mentions_oom;
}

void Report(const RunnerOptions &options, double now, const std::string &text) {
  if (!options.progress) return;
  char stamp[32];
  std::snprintf(stamp, sizeof(stamp), "[%8.1fs] ", now);
  *options.progress << stamp << text << std::endl;
}

}  // namespace

std::vector<uint32_t> QueuePriorities(const std::vector<double> &expected_s) {
  auto key = [](double e) { return e < 0 ? std::numeric_limits<double>::infinity() : e; };
  std::vector<uint32_t> priorities;
  for (double mine : expected_s) {
    size_t sooner = 0;
    for (double other : expected_s) sooner += key(other) < key(mine);
    priorities.push_back(static_cast<uint32_t>(std::min<size_t>(sooner + 1, 65535)));
  }
  return priorities;
}

double JobRecord::KernelMs() const {
  double total = 0;
  for (const KernelTime &k : kernels) total += k.ms;
  return total;
}

uint64_t JobRecord::PeakMemoryBytes() const {
  uint64_t peak = 0;
  for (const MemorySample &m : memory_samples) peak = std::max(peak, m.bytes);
  return peak;
}

BatchResult RunBatch(const std::vector<Job> &jobs, const RunnerOptions &options) {
  BatchResult result;
  for (const Job &job : jobs) {
    JobRecord r;
    r.job = job;
    r.queued_s = job.arrival_s;
    result.records.push_back(std::move(r));
  }
  // Queue order: arrival time, then list order; with expected run times, the arrived job expected
  // to run longest goes first (one never seen counts as longest: nothing bounds it).
  std::vector<size_t> queue(jobs.size());
  std::iota(queue.begin(), queue.end(), 0);
  std::stable_sort(queue.begin(), queue.end(),
                   [&](size_t a, size_t b) { return jobs[a].arrival_s < jobs[b].arrival_s; });
  const bool longest_first = options.expected_s.size() == jobs.size();
  auto expected = [&](size_t job) {
    double e = options.expected_s[job];
    return e < 0 ? std::numeric_limits<double>::infinity() : e;
  };
  // The position in `queue` of the job to start now, or queue.size() when none has arrived.
  auto next_job = [&](double now) {
    size_t best = queue.size();
    for (size_t k = 0; k < queue.size() && jobs[queue[k]].arrival_s <= now; ++k) {
      if (best == queue.size()) best = k;
      if (!longest_first) break;
      if (expected(queue[k]) > expected(queue[best])) best = k;
    }
    return best;
  };

  const std::vector<uint32_t> priorities =
      longest_first ? QueuePriorities(options.expected_s) : std::vector<uint32_t>(jobs.size(), 0);

  // Set once here, inherited by every job (nothing but async-signal-safe calls after fork).
  if (!options.socket.empty()) setenv("MGB_SOCKET", options.socket.c_str(), 1);
  setenv("MGB_REPORT_WAITS", "1", 1);  // libmgb's MGB_WAIT_MS line, parsed into mgb_wait_ms
  const Clock::time_point start = Clock::now();
  if (options.watcher) options.watcher->BatchStarted(start);
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::vector<std::pair<pid_t, size_t>> running;  // pid, record index
  size_t started = 0, done = 0, crashed = 0;
  int workers = std::max(1, options.workers);

  // The host memory gate: each job's expected peak (learned, else estimated), and when the gate
  // first held it (-1: never), so that the hold is reported once and timed.
  std::map<std::string, uint64_t> host_peaks = options.host_peaks;
  std::vector<double> held_since(jobs.size(), -1);
  double next_host_look_s = 0;
  auto expected_host_peak = [&](const Job &job) {
    auto it = host_peaks.find(CommandLine(job));
    return it != host_peaks.end() && it->second > 0 ? it->second : job.host_memory_bytes;
  };
  auto host_memory_allows = [&](size_t index, const JobRecord &r) {
    std::vector<std::pair<pid_t, uint64_t>> others;
    for (const auto &[pid, other] : running)
      others.emplace_back(pid, expected_host_peak(result.records[other].job));
    const uint64_t peak = expected_host_peak(r.job);
    const HostMemoryVerdict v = options.host_gate->Admits(peak, others);
    if (!v.admit && held_since[index] < 0) {
      held_since[index] = elapsed();
      using core::FormatBytes;
      Report(options, held_since[index],
             "hold " + r.job.name + " for host memory: " + FormatBytes(v.available) +
                 " available, " + FormatBytes(v.pending) + " more expected by " +
                 std::to_string(running.size()) + " running, it needs " + FormatBytes(v.needed) +
                 " (expected peak " + (peak > 0 ? FormatBytes(peak) : std::string("unknown")) +
                 " + reserve " + FormatBytes(options.host_gate->reserve()) + ")");
    }
    return v.admit;
  };

  while (!queue.empty() || !running.empty()) {
    if (options.stop && *options.stop) {
      result.interrupted = true;
      for (auto &[pid, index] : running) kill(-pid, SIGTERM);
      for (auto &[pid, index] : running) {
        int status = 0;
        rusage usage{};
        wait4(pid, &status, 0, &usage);
        if (options.watcher) options.watcher->JobEnded(index);
        Complete(result.records[index], status, usage, elapsed());
      }
      running.clear();
      Report(options, elapsed(), "interrupted: running jobs were stopped, queued jobs not started");
      break;
    }
    if (options.slots) workers = std::max(1, options.slots(elapsed()));
    while (running.size() < size_t(workers)) {
      const size_t position = next_job(elapsed());
      if (position == queue.size()) break;
      const size_t index = queue[position];
      JobRecord &r = result.records[index];
      if (options.host_gate != nullptr) {
        // A held job is looked at again at most twice a second: each look reads /proc.
        if (held_since[index] >= 0 && elapsed() < next_host_look_s) break;
        if (!host_memory_allows(index, r)) {
          next_host_look_s = elapsed() + 0.5;
          break;
        }
      }
      queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(position));
      r.started_s = elapsed();
      if (held_since[index] >= 0) r.host_wait_s = r.started_s - held_since[index];
      pid_t pid = Launch(r, options, priorities[index]);
      ++started;
      if (pid < 0) {  // fork failed: the job counts as crashed
        r.ended_s = r.started_s;
        r.crashed = true;
        ++done;
        ++crashed;
        Report(options, r.ended_s, "cannot start " + r.job.name + ": " + std::strerror(errno));
        continue;
      }
      setpgid(pid, pid);  // also here: no race with the child's own setpgid
      running.emplace_back(pid, index);
      if (options.watcher) options.watcher->JobStarted(index, pid);
      Report(options, r.started_s,
             "start " + r.job.name + " (" + std::to_string(started) + "/" +
                 std::to_string(jobs.size()) + " started, " + std::to_string(running.size()) +
                 " running)");
    }
    for (size_t i = 0; i < running.size();) {
      int status = 0;
      rusage usage{};
      pid_t pid = wait4(running[i].first, &status, WNOHANG, &usage);
      if (pid == 0) {
        ++i;
        continue;
      }
      JobRecord &r = result.records[running[i].second];
      if (options.watcher) options.watcher->JobEnded(running[i].second);
      Complete(r, status, usage, elapsed());
      uint64_t &learned = host_peaks[CommandLine(r.job)];
      learned = std::max(learned, r.host_peak_bytes);
      next_host_look_s = 0;  // memory came free: a held job may go now
      running.erase(running.begin() + i);
      ++done;
      crashed += r.crashed;
      char line[256];
      std::snprintf(line, sizeof(line),
                    "end %s %s%s %.1fs (%zu/%zu done, %zu crashed, %zu running)",
                    r.job.name.c_str(),
                    r.signal ? ("signal=" + std::to_string(r.signal)).c_str()
                             : ("exit=" + std::to_string(r.exit_code)).c_str(),
                    r.oom ? " OOM" : (r.result.empty() ? "" : (" " + r.result).c_str()),
                    r.ended_s - r.started_s, done, jobs.size(), crashed, running.size());
      Report(options, r.ended_s, line);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(options.poll_s));
  }
  for (const JobRecord &r : result.records)
    result.makespan_s = std::max(result.makespan_s, r.ended_s);
  return result;
}

}  // namespace mgb::batch
