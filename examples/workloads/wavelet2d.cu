// wavelet2d: multi-level 2D discrete wavelet transform with the reversible CDF 5/3 integer
// lifting scheme (JPEG 2000's lossless wavelet, like Rodinia's dwt2d). The image is generated on
// the host in chunks by several threads and streamed to the device through a pinned buffer; each
// iteration runs the full forward transform and the full inverse, like a codec round trip. With
// --snapshots the reconstructed image is streamed back now and then and every pixel compared on
// the host with the original.
// Check: the first row pass on sampled rows against a CPU lifting reference, and the round trip
// (exact reconstruction) on sampled rows on the CPU and on every pixel on the device.
#include "workload_common.cuh"

#include <cmath>
#include <string>

namespace {

constexpr int kLevels = 4;

struct Image {
  size_t width = 0, height = 0;  // multiples of 2^kLevels
  int* pixels = nullptr;         // the image, and the coefficients after a forward pass
  int* scratch = nullptr;        // intermediate of each pass
  size_t Pixels() const { return width * height; }
};

__host__ __device__ inline int PixelValue(uint64_t seed, size_t x, size_t y, size_t width) {
  // A 12-bit image: a smooth gradient with texture and noise.
  int smooth = int((x * 3 + y * 5) % 2048);
  int texture = int(((x / 8) ^ (y / 8)) & 255) * 4;
  return smooth + texture + int(Hash2(seed, y * width + x) % 256);
}

// ---- 1D CDF 5/3 lifting on a line of n (even) samples at `stride`, symmetric extension ----
__host__ __device__ inline int Detail(const int* x, size_t stride, size_t n, size_t k) {
  size_t right = 2 * k + 2 < n ? 2 * k + 2 : n - 2;
  return x[(2 * k + 1) * stride] - ((x[2 * k * stride] + x[right * stride]) >> 1);
}
__host__ __device__ inline int Smooth(const int* x, size_t stride, size_t n, size_t k) {
  int dk = Detail(x, stride, n, k);
  int dprev = k > 0 ? Detail(x, stride, n, k - 1) : dk;
  return x[2 * k * stride] + ((dprev + dk + 2) >> 2);
}
// Inverse: coefficients c hold s[0..n/2) then d[0..n/2) at `stride`.
__host__ __device__ inline int EvenSample(const int* c, size_t stride, size_t n, size_t k) {
  size_t half = n / 2;
  int dk = c[(half + k) * stride];
  int dprev = k > 0 ? c[(half + k - 1) * stride] : dk;
  return c[k * stride] - ((dprev + dk + 2) >> 2);
}
__host__ __device__ inline int OddSample(const int* c, size_t stride, size_t n, size_t k) {
  int even = EvenSample(c, stride, n, k);
  int next = k + 1 < n / 2 ? EvenSample(c, stride, n, k + 1) : even;
  return c[(n / 2 + k) * stride] + ((even + next) >> 1);
}

// Rows of the w x h region: thread per (row, k), output s to [0, w/2), d to [w/2, w).
__global__ void ForwardRowsKernel(const int* src, int* dst, size_t width, size_t w, size_t h) {
  size_t k = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (k >= w / 2) return;
  for (size_t y = blockIdx.y; y < h; y += gridDim.y) {
    const int* line = src + y * width;
    dst[y * width + k] = Smooth(line, 1, w, k);
    dst[y * width + w / 2 + k] = Detail(line, 1, w, k);
  }
}
// Columns: thread per (column, k) with threads along x, so loads stay coalesced.
__global__ void ForwardColsKernel(const int* src, int* dst, size_t width, size_t w, size_t h) {
  size_t x = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (x >= w) return;
  for (size_t k = blockIdx.y; k < h / 2; k += gridDim.y) {
    dst[k * width + x] = Smooth(src + x, width, h, k);
    dst[(h / 2 + k) * width + x] = Detail(src + x, width, h, k);
  }
}
__global__ void InverseColsKernel(const int* src, int* dst, size_t width, size_t w, size_t h) {
  size_t x = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (x >= w) return;
  for (size_t k = blockIdx.y; k < h / 2; k += gridDim.y) {
    dst[2 * k * width + x] = EvenSample(src + x, width, h, k);
    dst[(2 * k + 1) * width + x] = OddSample(src + x, width, h, k);
  }
}
__global__ void InverseRowsKernel(const int* src, int* dst, size_t width, size_t w, size_t h) {
  size_t k = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  if (k >= w / 2) return;
  for (size_t y = blockIdx.y; y < h; y += gridDim.y) {
    dst[y * width + 2 * k] = EvenSample(src + y * width, 1, w, k);
    dst[y * width + 2 * k + 1] = OddSample(src + y * width, 1, w, k);
  }
}

__global__ void CountMismatchKernel(const int* pixels, size_t width, size_t height, uint64_t seed,
                                    unsigned long long* mismatches) {
  unsigned long long local = 0;
  size_t total = width * height;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total;
       i += size_t(gridDim.x) * blockDim.x)
    local += pixels[i] != PixelValue(seed, i % width, i / width, width);
  if (local) atomicAdd(mismatches, local);
}

dim3 PassGrid(size_t threads_x, size_t lines) {
  return dim3(static_cast<unsigned>((threads_x + 255) / 256),
              static_cast<unsigned>(std::min<size_t>(lines, 65535)));
}

// One level of the forward transform on the top-left w x h region; result back in `pixels`.
void ForwardLevel(Image& img, size_t w, size_t h, KernelTimers& timers, bool rows_only = false) {
  timers.Begin("dwt_rows");
  ForwardRowsKernel<<<PassGrid(w / 2, h), 256>>>(img.pixels, img.scratch, img.width, w, h);
  timers.End();
  if (rows_only) return;
  timers.Begin("dwt_cols");
  ForwardColsKernel<<<PassGrid(w, h / 2), 256>>>(img.scratch, img.pixels, img.width, w, h);
  timers.End();
}

void InverseLevel(Image& img, size_t w, size_t h, KernelTimers& timers) {
  timers.Begin("idwt_cols");
  InverseColsKernel<<<PassGrid(w, h / 2), 256>>>(img.pixels, img.scratch, img.width, w, h);
  timers.End();
  timers.Begin("idwt_rows");
  InverseRowsKernel<<<PassGrid(w / 2, h), 256>>>(img.scratch, img.pixels, img.width, w, h);
  timers.End();
}

std::vector<int> DownloadRow(const int* buffer, const Image& img, size_t y) {
  std::vector<int> row(img.width);
  CUDA_CHECK(cudaMemcpy(row.data(), buffer + y * img.width, img.width * sizeof(int), cudaMemcpyDeviceToHost));
  return row;
}

std::vector<int> OriginalRow(const Image& img, uint64_t seed, size_t y) {
  std::vector<int> row(img.width);
  for (size_t x = 0; x < img.width; ++x) row[x] = PixelValue(seed, x, y, img.width);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  WorkloadOptions opt = ParseWorkloadOptions(
      argc, argv, "wavelet2d: 4-level 2D CDF 5/3 lifting wavelet transform and its inverse",
      "forward+inverse round trips (default 20)");
  if (opt.iters == 0) opt.iters = 20;
  auto t0 = std::chrono::steady_clock::now();

  Image img;
  size_t align = size_t(1) << kLevels;
  double pixels = opt.gb * kGiB / (2 * sizeof(int));
  img.width = std::max<size_t>(64, static_cast<size_t>(std::sqrt(pixels * 1.5)) / align * align);
  img.height = std::max<size_t>(64, static_cast<size_t>(pixels / img.width) / align * align);
  size_t bytes = 2 * img.Pixels() * sizeof(int);
  PrintPlan("wavelet2d", opt, bytes,
            "image=" + std::to_string(img.width) + "x" + std::to_string(img.height) + " levels=4");
  if (opt.dry_run) return 0;

  CUDA_CHECK(cudaMalloc(&img.pixels, img.Pixels() * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&img.scratch, img.Pixels() * sizeof(int)));
  KernelTimers timers;
  HostIo host(opt.host_threads);
  auto original = [&](size_t i) { return PixelValue(opt.seed, i % img.width, i / img.width, img.width); };
  host.Upload("input", img.pixels, img.Pixels(), original);
  size_t bad_snapshot = 0;

  // The first row pass, checked on sampled rows against the CPU lifting.
  std::vector<size_t> rows(opt.samples);
  for (int k = 0; k < opt.samples; ++k) rows[k] = Hash2(opt.seed ^ 0xD7, k) % img.height;
  ForwardLevel(img, img.width, img.height, timers, /*rows_only=*/true);
  long bad_lifting = 0;
  for (size_t y : rows) {
    std::vector<int> got = DownloadRow(img.scratch, img, y), x = OriginalRow(img, opt.seed, y);
    for (size_t k = 0; k < img.width / 2; ++k)
      bad_lifting += (got[k] != Smooth(x.data(), 1, img.width, k)) +
                     (got[img.width / 2 + k] != Detail(x.data(), 1, img.width, k));
  }

  for (long it = 0; it < opt.iters; ++it) {
    for (int l = 0; l < kLevels; ++l) ForwardLevel(img, img.width >> l, img.height >> l, timers);
    for (int l = kLevels - 1; l >= 0; --l) InverseLevel(img, img.width >> l, img.height >> l, timers);
    for (long k = SnapshotsDue(it, opt.iters, opt.snapshots); k > 0; --k)
      bad_snapshot += host.Scan("snapshot", img.pixels, img.Pixels(),
                                [&](size_t i, int v) { return v == original(i); });
  }

  long bad_cpu = 0;
  for (size_t y : rows) {
    std::vector<int> got = DownloadRow(img.pixels, img, y), want = OriginalRow(img, opt.seed, y);
    for (size_t x = 0; x < img.width; ++x) bad_cpu += got[x] != want[x];
  }
  unsigned long long* d_mismatches = nullptr;
  CUDA_CHECK(cudaMalloc(&d_mismatches, sizeof(unsigned long long)));
  CUDA_CHECK(cudaMemset(d_mismatches, 0, sizeof(unsigned long long)));
  timers.Begin("compare");
  CountMismatchKernel<<<BlocksFor(img.Pixels(), 256), 256>>>(img.pixels, img.width, img.height,
                                                             opt.seed, d_mismatches);
  timers.End();
  unsigned long long mismatches = 0;
  CUDA_CHECK(cudaMemcpy(&mismatches, d_mismatches, sizeof(mismatches), cudaMemcpyDeviceToHost));

  CUDA_CHECK(cudaFree(d_mismatches));
  CUDA_CHECK(cudaFree(img.pixels));
  CUDA_CHECK(cudaFree(img.scratch));
  bool pass = bad_lifting == 0 && bad_cpu == 0 && mismatches == 0 && bad_snapshot == 0;
  char detail[192];
  std::snprintf(detail, sizeof(detail),
                "bad_lifting=%ld bad_rows=%ld mismatched_pixels=%llu bad_snapshot_pixels=%zu",
                bad_lifting, bad_cpu, mismatches, bad_snapshot);
  return Finish("wavelet2d", pass, timers, host, SecondsSince(t0), detail);
}
