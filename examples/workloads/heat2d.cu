// heat2d: explicit heat diffusion on a large 2D image (a 5-point Jacobi stencil, like Rodinia's
// SRAD/hotspot family). Fixed (Dirichlet) borders; a reduction every few sweeps tracks total heat.
// The initial image is made on the host and streamed in; with --snapshots the state is streamed
// back now and then and every cell checked on the host (the maximum principle).
// Check: the first sweeps against a CPU reference on sampled windows (recomputed from the seeded
// input), the last sweep against a CPU reference on sampled windows of the device state, and the
// maximum principle (no value leaves the initial range).
#include "workload_common.cuh"

#include <cmath>
#include <string>

namespace {

constexpr float kAlpha = 0.2f;
constexpr int kWindow = 32;        // side of a checked window
constexpr int kFirstSweeps = 4;    // sweeps the CPU reference replays from the generated input
constexpr int kReduceEvery = 50;

struct Grid {
  size_t nx = 0, ny = 0;  // columns, rows
  float* a = nullptr;     // current state
  float* b = nullptr;     // next state
  size_t Cells() const { return nx * ny; }
};

__host__ __device__ inline float InitialValue(uint64_t seed, size_t index) {
  return 100.0f * UnitFloat(Hash2(seed, index));
}

__host__ __device__ inline float Stencil(float c, float n, float s, float w, float e) {
  return c + kAlpha * (n + s + w + e - 4.0f * c);
}

// One Jacobi sweep over the interior; the border rows/columns never change.
__global__ void SweepKernel(const float* __restrict__ in, float* __restrict__ out, size_t nx,
                            size_t ny) {
  size_t x = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  for (size_t y = blockIdx.y * size_t(blockDim.y) + threadIdx.y; y < ny;
       y += size_t(gridDim.y) * blockDim.y) {
    if (x == 0 || y == 0 || x >= nx - 1 || y >= ny - 1) continue;
    size_t i = y * nx + x;
    out[i] = Stencil(in[i], in[i - nx], in[i + nx], in[i - 1], in[i + 1]);
  }
}

// Sum, min and max of the state (values are non-negative, so their bit patterns order as ints).
__global__ void ReduceKernel(const float* __restrict__ in, size_t cells, double* sum,
                             unsigned* min_bits, unsigned* max_bits) {
  __shared__ double partial[1024];
  double local = 0;
  float lo = INFINITY, hi = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < cells;
       i += size_t(gridDim.x) * blockDim.x) {
    float v = in[i];
    local += v;
    lo = fminf(lo, v);
    hi = fmaxf(hi, v);
  }
  partial[threadIdx.x] = local;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sum, partial[0]);
  atomicMin(min_bits, __float_as_uint(lo));
  atomicMax(max_bits, __float_as_uint(hi));
}

struct Stats {
  double sum = 0;
  float min = 0, max = 0;
};

Stats Reduce(const Grid& g, KernelTimers& timers) {
  double* d_sum = nullptr;
  unsigned* d_bits = nullptr;
  CUDA_CHECK(cudaMalloc(&d_sum, sizeof(double)));
  CUDA_CHECK(cudaMalloc(&d_bits, 2 * sizeof(unsigned)));
  unsigned init_bits[2] = {0x7f800000u /* +inf */, 0u};
  CUDA_CHECK(cudaMemset(d_sum, 0, sizeof(double)));
  CUDA_CHECK(cudaMemcpy(d_bits, init_bits, sizeof(init_bits), cudaMemcpyHostToDevice));
  timers.Begin("reduce");
  ReduceKernel<<<1024, 1024>>>(g.a, g.Cells(), d_sum, d_bits, d_bits + 1);
  timers.End();
  Stats s;
  unsigned bits[2];
  CUDA_CHECK(cudaMemcpy(&s.sum, d_sum, sizeof(double), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(bits, d_bits, sizeof(bits), cudaMemcpyDeviceToHost));
  std::memcpy(&s.min, &bits[0], sizeof(float));
  std::memcpy(&s.max, &bits[1], sizeof(float));
  CUDA_CHECK(cudaFree(d_sum));
  CUDA_CHECK(cudaFree(d_bits));
  return s;
}

void Sweep(Grid& g, KernelTimers& timers) {
  dim3 block(32, 8);
  dim3 grid(static_cast<unsigned>((g.nx + block.x - 1) / block.x),
            static_cast<unsigned>(std::min<size_t>((g.ny + block.y - 1) / block.y, 65535)));
  timers.Begin("diffuse");
  SweepKernel<<<grid, block>>>(g.a, g.b, g.nx, g.ny);
  timers.End();
  std::swap(g.a, g.b);
}

// CPU reference: applies `sweeps` sweeps to a (w + 2*sweeps) square region, returns the inner
// w x w window. The region must lie inside the grid's interior (no border cells inside the cone).
std::vector<float> CpuSweeps(std::vector<float> region, int w, int sweeps) {
  int side = w + 2 * sweeps;
  std::vector<float> next(region);
  for (int s = 0; s < sweeps; ++s) {
    for (int y = 1; y < side - 1; ++y) {
      for (int x = 1; x < side - 1; ++x) {
        size_t i = size_t(y) * side + x;
        next[i] = Stencil(region[i], region[i - side], region[i + side], region[i - 1],
                          region[i + 1]);
      }
    }
    region.swap(next);
  }
  std::vector<float> inner(size_t(w) * w);
  for (int y = 0; y < w; ++y)
    for (int x = 0; x < w; ++x) inner[size_t(y) * w + x] = region[size_t(y + sweeps) * side + x + sweeps];
  return inner;
}

// Copies a side x side square at (x0, y0) of a device state to the host.
std::vector<float> CopyWindow(const float* state, const Grid& g, size_t x0, size_t y0, int side) {
  std::vector<float> out(size_t(side) * side);
  CUDA_CHECK(cudaMemcpy2D(out.data(), side * sizeof(float), state + y0 * g.nx + x0,
                          g.nx * sizeof(float), side * sizeof(float), side,
                          cudaMemcpyDeviceToHost));
  return out;
}

bool Close(float got, float want) { return std::fabs(got - want) <= 1e-3f * (1.0f + std::fabs(want)); }

struct Window {
  size_t x0, y0;
};

// Window origins whose `halo`-cone stays inside the interior.
std::vector<Window> PickWindows(const Grid& g, int count, int halo, uint64_t seed) {
  std::vector<Window> windows;
  size_t span_x = g.nx - kWindow - 2 * halo - 2, span_y = g.ny - kWindow - 2 * halo - 2;
  for (int k = 0; k < count; ++k) {
    windows.push_back({1 + halo + Hash2(seed, 2 * k) % span_x, 1 + halo + Hash2(seed, 2 * k + 1) % span_y});
  }
  return windows;
}

// Compares device windows with the CPU reference; `regions` are the halo'd inputs per window.
int CountMismatches(const Grid& g, const std::vector<Window>& windows,
                    const std::vector<std::vector<float>>& regions, int sweeps) {
  int bad = 0;
  for (size_t k = 0; k < windows.size(); ++k) {
    std::vector<float> want = CpuSweeps(regions[k], kWindow, sweeps);
    std::vector<float> got = CopyWindow(g.a, g, windows[k].x0, windows[k].y0, kWindow);
    for (size_t i = 0; i < want.size(); ++i) bad += !Close(got[i], want[i]);
  }
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  WorkloadOptions opt = ParseWorkloadOptions(
      argc, argv, "heat2d: 2D heat diffusion stencil on a large image",
      "number of diffusion sweeps (default 400)");
  if (opt.iters == 0) opt.iters = 400;
  if (opt.iters < kFirstSweeps + 1) opt.iters = kFirstSweeps + 1;
  auto t0 = std::chrono::steady_clock::now();

  Grid g;
  size_t cells = static_cast<size_t>(opt.gb * kGiB / (2 * sizeof(float)));
  g.nx = std::max<size_t>(256, static_cast<size_t>(std::sqrt(double(cells))) / 32 * 32);
  g.ny = std::max<size_t>(256, cells / g.nx);
  size_t bytes = 2 * g.Cells() * sizeof(float);
  PrintPlan("heat2d", opt, bytes,
            "grid=" + std::to_string(g.nx) + "x" + std::to_string(g.ny) + " buffers=2");
  if (opt.dry_run) return 0;

  CUDA_CHECK(cudaMalloc(&g.a, g.Cells() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&g.b, g.Cells() * sizeof(float)));
  KernelTimers timers;
  HostIo host(opt.host_threads);
  host.Upload("input", g.a, g.Cells(), [&](size_t i) { return InitialValue(opt.seed, i); });
  CUDA_CHECK(cudaMemcpy(g.b, g.a, g.Cells() * sizeof(float), cudaMemcpyDeviceToDevice));
  Stats initial = Reduce(g, timers);
  size_t bad_snapshot = 0;
  auto snapshot = [&] {  // every cell stays within the initial range (maximum principle)
    bad_snapshot += host.Scan("snapshot", g.a, g.Cells(), [&](size_t, float v) {
      return v >= initial.min - 1e-3f && v <= initial.max + 1e-3f;
    });
  };

  // Phase 1: the first sweeps, checked from the generated input (CPU regenerates the cones).
  for (int s = 0; s < kFirstSweeps; ++s) {
    Sweep(g, timers);
    for (long k = SnapshotsDue(s, opt.iters, opt.snapshots); k > 0; --k) snapshot();
  }
  std::vector<Window> first = PickWindows(g, opt.samples, kFirstSweeps, opt.seed ^ 0x51);
  std::vector<std::vector<float>> first_regions;
  int side = kWindow + 2 * kFirstSweeps;
  for (const Window& w : first) {
    std::vector<float> region(size_t(side) * side);
    for (int y = 0; y < side; ++y)
      for (int x = 0; x < side; ++x)
        region[size_t(y) * side + x] =
            InitialValue(opt.seed, (w.y0 - kFirstSweeps + y) * g.nx + (w.x0 - kFirstSweeps + x));
    first_regions.push_back(std::move(region));
  }
  int bad_first = CountMismatches(g, first, first_regions, kFirstSweeps);

  // Phase 2: the long run, with a reduction now and then (as a solver watches convergence).
  for (long s = kFirstSweeps; s < opt.iters - 1; ++s) {
    Sweep(g, timers);
    if (s % kReduceEvery == 0) Reduce(g, timers);
    for (long k = SnapshotsDue(s, opt.iters, opt.snapshots); k > 0; --k) snapshot();
  }
  // Phase 3: the last sweep, checked from the device state just before it.
  std::vector<Window> last = PickWindows(g, opt.samples, 1, opt.seed ^ 0x77);
  std::vector<std::vector<float>> last_regions;
  for (const Window& w : last) last_regions.push_back(CopyWindow(g.a, g, w.x0 - 1, w.y0 - 1, kWindow + 2));
  Sweep(g, timers);
  int bad_last = CountMismatches(g, last, last_regions, 1);
  for (long k = SnapshotsDue(opt.iters - 1, opt.iters, opt.snapshots); k > 0; --k) snapshot();
  Stats final_stats = Reduce(g, timers);

  bool bounded = final_stats.min >= initial.min - 1e-3f && final_stats.max <= initial.max + 1e-3f &&
                 std::isfinite(final_stats.sum);
  CUDA_CHECK(cudaFree(g.a));
  CUDA_CHECK(cudaFree(g.b));
  bool pass = bad_first == 0 && bad_last == 0 && bounded && bad_snapshot == 0;
  char detail[256];
  std::snprintf(detail, sizeof(detail),
                "bad_first=%d bad_last=%d bounded=%d bad_snapshot_cells=%zu heat_initial=%.6g "
                "heat_final=%.6g",
                bad_first, bad_last, int(bounded), bad_snapshot, initial.sum, final_stats.sum);
  return Finish("heat2d", pass, timers, host, SecondsSince(t0), detail);
}
