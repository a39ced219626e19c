// nw_align: global sequence alignment by Needleman-Wunsch dynamic programming (like Rodinia's
// needle): the full score matrix lives in device memory and is filled in an anti-diagonal
// wavefront of 32x32 tiles, one launch per tile diagonal (launch widths grow and shrink).
// Sequences are generated on the host and copied for each alignment; the substitution matrix
// sits in constant memory. With --snapshots the whole matrix is streamed back after an alignment
// (as needle copies it back for the traceback) and every cell checked against the bounds any
// alignment path allows. Check: sampled windows of the final matrix recomputed on the CPU from
// the device's window borders (the recurrence, exactly), including the first row/column and the
// bottom-right corner (the alignment score).
#include "workload_common.cuh"

#include <cmath>
#include <random>
#include <string>

namespace {

constexpr int kTile = 32;
constexpr int kAlphabet = 20;  // amino acids
constexpr int kGap = -4;
constexpr int kWindow = 48;    // checked window side (crosses tile borders on purpose)

__constant__ int c_substitution[kAlphabet * kAlphabet];

struct Alignment {
  size_t n = 0;          // both sequences have length n (a multiple of kTile)
  size_t ld = 0;         // row length of the score matrix: n + 1
  int* score = nullptr;  // (n + 1) x (n + 1)
  char* a = nullptr;     // rows
  char* b = nullptr;     // columns
};

// A BLOSUM-like symmetric substitution matrix, generated from the seed.
std::vector<int> SubstitutionMatrix(uint64_t seed) {
  std::vector<int> m(kAlphabet * kAlphabet);
  for (int i = 0; i < kAlphabet; ++i)
    for (int j = 0; j <= i; ++j) {
      int v = i == j ? 4 + int(Hash2(seed, i) % 8) : -4 + int(Hash2(seed, 1000 + i * kAlphabet + j) % 8);
      m[i * kAlphabet + j] = m[j * kAlphabet + i] = v;
    }
  return m;
}

__global__ void InitBordersKernel(int* score, size_t n, size_t ld) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i <= n;
       i += size_t(gridDim.x) * blockDim.x) {
    score[i] = int(i) * kGap;       // first row
    score[i * ld] = int(i) * kGap;  // first column
  }
}

// Fills the tiles on tile diagonal `diag`; inside a tile, threads sweep its anti-diagonals.
__global__ void TileKernel(int* score, size_t ld, const char* a, const char* b, int diag,
                           int tiles) {
  __shared__ int s[kTile + 1][kTile + 1];
  __shared__ char sa[kTile], sb[kTile];
  int ti = max(0, diag - tiles + 1) + blockIdx.x;
  int tj = diag - ti;
  size_t r0 = size_t(ti) * kTile, c0 = size_t(tj) * kTile;
  int t = threadIdx.x;
  s[0][t + 1] = score[r0 * ld + c0 + 1 + t];
  s[t + 1][0] = score[(r0 + 1 + t) * ld + c0];
  if (t == 0) s[0][0] = score[r0 * ld + c0];
  sa[t] = a[r0 + t];
  sb[t] = b[c0 + t];
  __syncthreads();
  for (int k = 0; k < 2 * kTile - 1; ++k) {
    int i = t + 1, j = k - t + 1;
    if (j >= 1 && j <= kTile) {
      int diagonal = s[i - 1][j - 1] + c_substitution[sa[i - 1] * kAlphabet + sb[j - 1]];
      s[i][j] = max(diagonal, max(s[i - 1][j] + kGap, s[i][j - 1] + kGap));
    }
    __syncthreads();
  }
  for (int i = 1; i <= kTile; ++i) score[(r0 + i) * ld + c0 + t + 1] = s[i][t + 1];
}

std::vector<char> RandomSequence(std::mt19937_64& rng, size_t n) {
  std::vector<char> seq(n);
  for (char& c : seq) c = static_cast<char>(rng() % kAlphabet);
  return seq;
}

// Copies rows [i0-1, i0+w) x columns [j0-1, j0+w) and recomputes the inner w x w on the CPU.
int CheckWindow(const Alignment& al, const std::vector<char>& a, const std::vector<char>& b,
                const std::vector<int>& sub, size_t i0, size_t j0) {
  int side = kWindow + 1;
  std::vector<int> got(size_t(side) * side);
  CUDA_CHECK(cudaMemcpy2D(got.data(), side * sizeof(int), al.score + (i0 - 1) * al.ld + (j0 - 1),
                          al.ld * sizeof(int), side * sizeof(int), side, cudaMemcpyDeviceToHost));
  int bad = 0;
  if (i0 == 1)
    for (int j = 0; j < side; ++j) bad += got[j] != int(j0 - 1 + j) * kGap;
  if (j0 == 1)
    for (int i = 0; i < side; ++i) bad += got[size_t(i) * side] != int(i0 - 1 + i) * kGap;
  std::vector<int> want(got);
  for (int i = 1; i < side; ++i)
    for (int j = 1; j < side; ++j) {
      int diagonal = want[size_t(i - 1) * side + j - 1] + sub[a[i0 + i - 2] * kAlphabet + b[j0 + j - 2]];
      int v = std::max(diagonal, std::max(want[size_t(i - 1) * side + j] + kGap, want[size_t(i) * side + j - 1] + kGap));
      want[size_t(i) * side + j] = v;
      bad += got[size_t(i) * side + j] != v;
    }
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  WorkloadOptions opt = ParseWorkloadOptions(
      argc, argv, "nw_align: Needleman-Wunsch alignment with an anti-diagonal wavefront",
      "alignments of fresh sequence pairs through the same matrix (default 10)");
  if (opt.iters == 0) opt.iters = 10;
  auto t0 = std::chrono::steady_clock::now();

  Alignment al;
  double cells = opt.gb * kGiB / sizeof(int);
  al.n = std::max<size_t>(2 * kWindow, static_cast<size_t>(std::sqrt(cells)) / kTile * kTile - kTile);
  al.ld = al.n + 1;
  size_t bytes = al.ld * al.ld * sizeof(int) + 2 * al.n;
  PrintPlan("nw_align", opt, bytes,
            "length=" + std::to_string(al.n) + " matrix=" + std::to_string(al.ld) + "^2 tile=32");
  if (opt.dry_run) return 0;

  std::vector<int> sub = SubstitutionMatrix(opt.seed);
  CUDA_CHECK(cudaMemcpyToSymbol(c_substitution, sub.data(), sub.size() * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&al.score, al.ld * al.ld * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&al.a, al.n));
  CUDA_CHECK(cudaMalloc(&al.b, al.n));

  KernelTimers timers;
  HostIo host(opt.host_threads);
  const long best = *std::max_element(sub.begin(), sub.end());
  size_t bad_snapshot = 0;
  auto snapshot = [&] {  // (i+j)*gap <= score(i,j) <= min(i,j)*best + |i-j|*gap
    bad_snapshot += host.Scan("snapshot", al.score, al.ld * al.ld, [&](size_t index, int v) {
      long i = long(index / al.ld), j = long(index % al.ld);
      long lo = (i + j) * kGap, hi = std::min(i, j) * best + std::labs(i - j) * kGap;
      return v >= lo && v <= hi;
    });
  };
  std::mt19937_64 rng(opt.seed);
  std::vector<char> a, b;
  int tiles = static_cast<int>(al.n / kTile);
  int final_score = 0;
  for (long it = 0; it < opt.iters; ++it) {
    a = RandomSequence(rng, al.n);
    b = RandomSequence(rng, al.n);
    CUDA_CHECK(cudaMemcpy(al.a, a.data(), al.n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(al.b, b.data(), al.n, cudaMemcpyHostToDevice));
    timers.Begin("init_borders");
    InitBordersKernel<<<BlocksFor(al.n + 1, 256), 256>>>(al.score, al.n, al.ld);
    timers.End();
    for (int diag = 0; diag < 2 * tiles - 1; ++diag) {
      int width = std::min(diag, tiles - 1) - std::max(0, diag - tiles + 1) + 1;
      timers.Begin("nw_tiles");
      TileKernel<<<width, kTile>>>(al.score, al.ld, al.a, al.b, diag, tiles);
      timers.End();
    }
    CUDA_CHECK(cudaMemcpy(&final_score, al.score + al.n * al.ld + al.n, sizeof(int), cudaMemcpyDeviceToHost));
    for (long k = SnapshotsDue(it, opt.iters, opt.snapshots); k > 0; --k) snapshot();
  }

  // Windows: the top-left corner (borders), the bottom-right corner (the score), random ones.
  size_t last = al.n - kWindow + 1;
  int bad = CheckWindow(al, a, b, sub, 1, 1) + CheckWindow(al, a, b, sub, last, last);
  for (int k = 0; k < opt.samples; ++k)
    bad += CheckWindow(al, a, b, sub, 1 + Hash2(opt.seed ^ 0xA1, k) % last, 1 + Hash2(opt.seed ^ 0xB2, k) % last);

  CUDA_CHECK(cudaFree(al.score));
  CUDA_CHECK(cudaFree(al.a));
  CUDA_CHECK(cudaFree(al.b));
  char detail[160];
  std::snprintf(detail, sizeof(detail), "bad_cells=%d bad_snapshot_cells=%zu score=%d length=%zu",
                bad, bad_snapshot, final_score, al.n);
  return Finish("nw_align", bad == 0 && bad_snapshot == 0, timers, host, SecondsSince(t0), detail);
}
