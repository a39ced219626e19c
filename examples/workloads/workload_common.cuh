// Shared helpers of the workload suite: argument parsing, error checks, kernel timing, seeded
// generators usable on host and device, and the parseable output lines the batch runner reads.
// Plain CUDA on purpose: these programs are later built through mgb-nvcc, which rewrites them.
#ifndef MGB_EXAMPLES_WORKLOADS_WORKLOAD_COMMON_CUH
#define MGB_EXAMPLES_WORKLOADS_WORKLOAD_COMMON_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

// Every CUDA call goes through this: the message names the call site and CUDA's error string
// ("out of memory" for cudaErrorMemoryAllocation), which is what `mgb batch` looks for.
#define CUDA_CHECK(call)                                                                       \
  do {                                                                                         \
    cudaError_t cuda_check_err_ = (call);                                                      \
    if (cuda_check_err_ != cudaSuccess) {                                                      \
      std::fprintf(stderr, "CUDA error at %s:%d: %s (%s)\n", __FILE__, __LINE__,               \
                   cudaGetErrorString(cuda_check_err_), #call);                                \
      std::printf("MGB_RESULT FAIL reason=cuda_error\n");                                      \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)

#define KERNEL_CHECK() CUDA_CHECK(cudaGetLastError())

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct WorkloadOptions {
  double gb = 1.0;          // target device footprint in GiB
  long iters = 0;           // workload-specific repetition count; 0 = the workload's default
  uint64_t seed = 1;
  bool dry_run = false;     // print the size plan and exit without touching the GPU
  int samples = 16;         // how many sampled regions the CPU reference checks
  long snapshots = 0;       // host snapshots of the state, spread evenly over the iterations
  int host_threads = 4;     // threads of the host phases (input generation, snapshot scans)
};

inline void PrintUsage(const char* prog, const char* what, const char* iters_meaning) {
  std::printf(
      "usage: %s [--gb N] [--iters N] [--seed N] [--samples N] [--snapshots N]\n"
      "          [--host-threads N] [--dry-run] [--help]\n"
      "  %s\n"
      "  --gb N            device memory footprint in GiB (fractions allowed, e.g. 0.1)\n"
      "  --iters N         %s\n"
      "  --seed N          input generator seed (default 1)\n"
      "  --samples N       sampled regions checked against the CPU reference (default 16)\n"
      "  --snapshots N     times the state is streamed back to the host and checked there,\n"
      "                    spread evenly over the iterations (default 0)\n"
      "  --host-threads N  host threads for input generation and snapshot checks (default 4)\n"
      "  --dry-run         print the size plan without touching the GPU\n"
      "Prints MGB_PLAN, MGB_KERNEL_MS name=<k> ms=<total> launches=<n>,\n"
      "MGB_HOST_MS phase=<input|snapshot> ms=<total> bytes=<n> count=<n>, MGB_RESULT PASS|FAIL.\n",
      prog, what, iters_meaning);
}

// Parses the common options; exits 0 on --help and 1 on bad input (naming the argument).
inline WorkloadOptions ParseWorkloadOptions(int argc, char** argv, const char* what,
                                            const char* iters_meaning) {
  WorkloadOptions opt;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n", argv[0], name);
        std::exit(1);
      }
      return argv[++i];
    };
    auto number = [&](const char* name) -> double {
      const char* text = value(name);
      char* end = nullptr;
      double v = std::strtod(text, &end);
      if (end == text || *end != '\0' || !(v >= 0)) {
        std::fprintf(stderr, "%s: %s must be a non-negative number, got '%s'\n", argv[0], name,
                     text);
        std::exit(1);
      }
      return v;
    };
    if (arg == "--help" || arg == "-h") {
      PrintUsage(argv[0], what, iters_meaning);
      std::exit(0);
    } else if (arg == "--gb") {
      opt.gb = number("--gb");
    } else if (arg == "--iters") {
      opt.iters = static_cast<long>(number("--iters"));
    } else if (arg == "--seed") {
      opt.seed = static_cast<uint64_t>(number("--seed"));
    } else if (arg == "--samples") {
      opt.samples = std::max(1, static_cast<int>(number("--samples")));
    } else if (arg == "--snapshots") {
      opt.snapshots = static_cast<long>(number("--snapshots"));
    } else if (arg == "--host-threads") {
      double threads = number("--host-threads");
      if (threads < 1 || threads > 256) {
        std::fprintf(stderr, "%s: --host-threads must be between 1 and 256, got %g\n", argv[0], threads);
        std::exit(1);
      }
      opt.host_threads = static_cast<int>(threads);
    } else if (arg == "--dry-run") {
      opt.dry_run = true;
    } else {
      std::fprintf(stderr, "%s: unknown argument '%s' (try --help)\n", argv[0], arg.c_str());
      std::exit(1);
    }
  }
  if (opt.gb < 0.001 || opt.gb > 4096) {
    std::fprintf(stderr, "%s: --gb must be between 0.001 and 4096, got %g\n", argv[0], opt.gb);
    std::exit(1);
  }
  return opt;
}

inline void PrintPlan(const char* workload, const WorkloadOptions& opt, size_t bytes,
                      const std::string& shape) {
  std::printf(
      "MGB_PLAN workload=%s gb_requested=%.3f bytes=%zu footprint_gib=%.3f iters=%ld "
      "snapshots=%ld %s\n",
      workload, opt.gb, bytes, bytes / kGiB, opt.iters, opt.snapshots, shape.c_str());
  std::fflush(stdout);
}

// ---- seeded generators: pure functions of (seed, index), identical on host and device, so the
// CPU reference can regenerate any input element without a host copy of the whole input. ----
__host__ __device__ inline uint64_t Mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
__host__ __device__ inline uint64_t Hash2(uint64_t seed, uint64_t index) {
  return Mix64(Mix64(seed) ^ index);
}
// Uniform in [0, 1) with 24 bits.
__host__ __device__ inline float UnitFloat(uint64_t h) {
  return static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
}

// Milliseconds (and bytes) summed per name, in first-seen order: kernels, host phases.
class NamedTotals {
 public:
  struct Total {
    std::string name;
    double ms = 0;
    size_t bytes = 0;
    long count = 0;
  };
  void Add(const std::string& name, double ms, size_t bytes = 0) {
    auto it = std::find_if(totals_.begin(), totals_.end(), [&](const Total& t) { return t.name == name; });
    if (it == totals_.end()) it = totals_.insert(totals_.end(), Total{name});
    it->ms += ms;
    it->bytes += bytes;
    it->count += 1;
  }
  const std::vector<Total>& All() const { return totals_; }
  double TotalMs() const {
    double total = 0;
    for (const Total& t : totals_) total += t.ms;
    return total;
  }

 private:
  std::vector<Total> totals_;
};

// ---- kernel timing with CUDA events; one accumulator per kernel name ----
class KernelTimers {
 public:
  KernelTimers() {
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~KernelTimers() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  KernelTimers(const KernelTimers&) = delete;
  KernelTimers& operator=(const KernelTimers&) = delete;

  void Begin(const char* name) {
    current_ = name;
    CUDA_CHECK(cudaEventRecord(start_, 0));
  }
  // Ends the interval opened by Begin: checks the launch, waits for it and adds its time.
  void End() {
    KERNEL_CHECK();
    CUDA_CHECK(cudaEventRecord(stop_, 0));
    CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    kernels_.Add(current_, ms);
  }
  void Print() const {
    for (const NamedTotals::Total& k : kernels_.All()) {
      std::printf("MGB_KERNEL_MS name=%s ms=%.3f launches=%ld\n", k.name.c_str(), k.ms, k.count);
    }
    std::fflush(stdout);
  }
  double TotalMs() const { return kernels_.TotalMs(); }

 private:
  cudaEvent_t start_{};
  cudaEvent_t stop_{};
  std::string current_;
  NamedTotals kernels_;
};

// Wall clock for the whole run (host phases included).
inline double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs body(begin, end) over [0, n) split across `threads` host threads.
template <typename Body>
void ParallelFor(size_t n, unsigned threads, Body body) {
  threads = std::max(1u, threads);
  if (n < 4096) threads = 1;
  std::vector<std::thread> pool;
  size_t chunk = (n + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    size_t begin = t * chunk;
    size_t end = std::min(n, begin + chunk);
    if (begin >= end) break;
    pool.emplace_back([=] { body(begin, end); });
  }
  for (std::thread& th : pool) th.join();
}

// How many snapshots fall due after iteration `it` (0-based) of `iters`: `total` snapshots spread
// evenly, the last one after the last iteration.
inline long SnapshotsDue(long it, long iters, long total) {
  if (iters <= 0) return 0;
  return (it + 1) * total / iters - it * total / iters;
}

// ---- the host phases of a job: its input made on the host and streamed in, its state streamed
// back out and checked on the host (a snapshot). The GPU idles meanwhile, as it does in real jobs
// that read inputs and write results. Data moves in chunks through one pinned staging buffer, so
// host memory stays small whatever the device footprint. ----
class HostIo {
 public:
  explicit HostIo(int threads) : threads_(static_cast<unsigned>(std::max(1, threads))) {
    CUDA_CHECK(cudaMallocHost(&staging_, kStagingBytes));
  }
  ~HostIo() { cudaFreeHost(staging_); }
  HostIo(const HostIo&) = delete;
  HostIo& operator=(const HostIo&) = delete;

  // device[i] = make(i) for i in [0, n), generated on the host.
  template <typename T, typename Make>
  void Upload(const char* phase, T* device, size_t n, Make make) {
    auto t0 = std::chrono::steady_clock::now();
    T* stage = static_cast<T*>(staging_);
    const size_t chunk = kStagingBytes / sizeof(T);
    for (size_t base = 0; base < n; base += chunk) {
      size_t count = std::min(chunk, n - base);
      ParallelFor(count, threads_, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) stage[i] = make(base + i);
      });
      CUDA_CHECK(cudaMemcpy(device + base, stage, count * sizeof(T), cudaMemcpyHostToDevice));
    }
    Account(phase, n * sizeof(T), t0);
  }

  // Streams device[0, n) to the host and calls ok(i, value) on every element; returns how many
  // were not ok.
  template <typename T, typename Check>
  size_t Scan(const char* phase, const T* device, size_t n, Check ok) {
    auto t0 = std::chrono::steady_clock::now();
    T* stage = static_cast<T*>(staging_);
    const size_t chunk = kStagingBytes / sizeof(T);
    std::atomic<size_t> bad{0};
    for (size_t base = 0; base < n; base += chunk) {
      size_t count = std::min(chunk, n - base);
      CUDA_CHECK(cudaMemcpy(stage, device + base, count * sizeof(T), cudaMemcpyDeviceToHost));
      ParallelFor(count, threads_, [&](size_t begin, size_t end) {
        size_t local = 0;
        for (size_t i = begin; i < end; ++i) local += !ok(base + i, stage[i]);
        bad += local;
      });
    }
    Account(phase, n * sizeof(T), t0);
    return bad;
  }

  void Print() const {
    for (const NamedTotals::Total& p : phases_.All())
      std::printf("MGB_HOST_MS phase=%s ms=%.3f bytes=%zu count=%ld\n", p.name.c_str(), p.ms,
                  p.bytes, p.count);
    std::fflush(stdout);
  }
  double TotalMs() const { return phases_.TotalMs(); }

 private:
  static constexpr size_t kStagingBytes = size_t(64) << 20;
  void Account(const char* name, size_t bytes, std::chrono::steady_clock::time_point t0) {
    phases_.Add(name, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(),
                bytes);
  }
  unsigned threads_;
  void* staging_ = nullptr;
  NamedTotals phases_;
};

inline int Finish(const char* workload, bool pass, const KernelTimers& timers, const HostIo& host,
                  double wall_s, const std::string& detail) {
  timers.Print();
  host.Print();
  std::printf("MGB_RESULT %s workload=%s wall_s=%.2f kernel_ms=%.1f host_ms=%.1f %s\n",
              pass ? "PASS" : "FAIL", workload, wall_s, timers.TotalMs(), host.TotalMs(),
              detail.c_str());
  std::fflush(stdout);
  return pass ? 0 : 1;
}

// Grid size for grid-stride kernels: enough blocks to fill the GPU, capped so it fits a launch.
inline unsigned BlocksFor(size_t n, unsigned threads) {
  size_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(blocks, 1u << 20)));
}

#endif  // MGB_EXAMPLES_WORKLOADS_WORKLOAD_COMMON_CUH
