// GPU test: static tasks from several threads at once, spread by mgbd over the GPUs. Each task is
// a saxpy checked against the CPU; with two or more GPUs the tasks must have used at least two.
// Then a migration: two lazy buffers bound by launches on two threads (two tasks, spread over two
// GPUs), then one launch using both moves one buffer's memory to the other GPU, at the same
// address and with its data (libmgb says "mgb: moved ..." on stderr); the result is checked.
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <mgb/mgb.h>

static const char *kExampleName = "runtime_two_gpus";
#include "example_check.h"

// A reusable barrier (std::barrier needs C++20, nvcc defaults to C++17).
class Barrier {
 public:
  explicit Barrier(int count) : count_(count) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mu_);
    int generation = generation_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation != generation_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int count_, arrived_ = 0, generation_ = 0;
};

__global__ void Saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  const int kThreads = 4, kRounds = 3, n = 1 << 22;
  Barrier all_placed(kThreads);
  std::vector<int> devices(kThreads * kRounds, -1);
  std::vector<int> ok(kThreads * kRounds, 0);
  auto work = [&](int t) {
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
      x[i] = std::sin(float(i + t));
      y[i] = std::cos(float(i));
    }
    for (int round = 0; round < kRounds; ++round) {
      dim3 block(256), grid((n + 255) / 256);
      mgb_task task = mgb_task_begin(2 * n * sizeof(float), mgb_dim(grid), mgb_dim(block),
                                     (const void *)Saxpy, "two_gpus.cu:task");
      all_placed.arrive_and_wait();  // every thread holds a task: mgbd had to spread them
      CHECK_CUDA(cudaGetDevice(&devices[t * kRounds + round]));
      float *dx, *dy;
      CHECK_CUDA(mgb_cudaMalloc(&dx, n * sizeof(float)));
      CHECK_CUDA(mgb_cudaMalloc(&dy, n * sizeof(float)));
      CHECK_CUDA(mgb_cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
      CHECK_CUDA(mgb_cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
      float a = 1.5f + round;
      Saxpy<<<grid, block>>>(n, a, dx, dy);
      CHECK_CUDA(cudaGetLastError());
      std::vector<float> out(n);
      CHECK_CUDA(mgb_cudaMemcpy(out.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
      CHECK_CUDA(mgb_cudaFree(dx));
      CHECK_CUDA(mgb_cudaFree(dy));
      mgb_task_end(task);
      bool good = true;
      for (int i = 0; i < n && good; ++i) good = std::fabs(out[i] - (a * x[i] + y[i])) < 1e-5f;
      ok[t * kRounds + round] = good;
      all_placed.arrive_and_wait();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (auto &thread : threads) thread.join();
  bool all_ok = true;
  // The migration: x bound on this thread, y on another (each its own lazy task, on two GPUs
  // while both are held), then both in one launch.
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) {
    hx[i] = 0.5f * float(i % 97);
    hy[i] = float(i % 89);
  }
  dim3 block(256), grid((n + 255) / 256);
  float *x = nullptr, *y = nullptr;
  CHECK_CUDA(mgb_cudaMalloc(&x, n * sizeof(float)));
  CHECK_CUDA(mgb_cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(mgb_prepare(mgb_dim(grid), mgb_dim(block), (const void *)Saxpy, "two_gpus.cu:x", x));
  std::thread([&] {
    CHECK_CUDA(mgb_cudaMalloc(&y, n * sizeof(float)));
    CHECK_CUDA(mgb_cudaMemcpy(y, hy.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(
        mgb_prepare(mgb_dim(grid), mgb_dim(block), (const void *)Saxpy, "two_gpus.cu:y", y));
  }).join();
  const float *x_kept = x, *y_kept = y;
  CHECK_CUDA(
      mgb_prepare(mgb_dim(grid), mgb_dim(block), (const void *)Saxpy, "two_gpus.cu:xy", n, x, y));
  Saxpy<<<grid, block>>>(n, 2.0f, mgb_arg(x), mgb_arg(y));
  CHECK_CUDA(cudaGetLastError());
  std::vector<float> out(n);
  CHECK_CUDA(mgb_cudaMemcpy(out.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  bool moved_ok = x == x_kept && y == y_kept;
  for (int i = 0; i < n && moved_ok; ++i) moved_ok = out[i] == 2.0f * hx[i] + hy[i];
  std::printf("one launch on buffers of two tasks: %s\n", moved_ok ? "right" : "WRONG");
  CHECK_CUDA(mgb_cudaFree(x));
  CHECK_CUDA(mgb_cudaFree(y));
  all_ok = all_ok && moved_ok;

  int count = 0;
  CHECK_CUDA(cudaGetDeviceCount(&count));
  std::set<int> used(devices.begin(), devices.end());
  for (int v : ok) all_ok = all_ok && v;
  std::printf("tasks ran on %zu GPU(s) of %d\n", used.size(), count);
  return Verdict(kExampleName, all_ok && (count < 2 || used.size() >= 2));
}
