// bfs_graph: breadth-first search on a large generated graph in CSR form (like Rodinia's bfs).
// The graph (vertex degrees 8..24, half of the edges local, half random) is built on the device:
// per-block degree sums, a host scan of the block sums, a block scan into the row offsets, then
// the edge lists. Each iteration runs a level-synchronous BFS from another source, recording
// levels and parents. Check, Graph500-style, on sampled vertices against a CPU regeneration of
// their edges: the CSR rows, parent edge and levels, and that no out-edge skips a level. With
// --snapshots the level array of a run is streamed back to the host (the result written out)
// and every level checked there to lie within the run's depth.
#include "workload_common.cuh"

#include <string>

namespace {

constexpr int kScanBlock = 1024;
constexpr int kMinDegree = 8;
constexpr int kDegreeRange = 17;  // degrees 8..24, 16 on average

struct Graph {
  size_t vertices = 0;
  size_t edges = 0;
  long long* offsets = nullptr;  // vertices + 1
  unsigned* columns = nullptr;   // edges
  int* level = nullptr;          // -1 = not reached
  unsigned* parent = nullptr;
};

__host__ __device__ inline int Degree(uint64_t seed, size_t v) {
  return kMinDegree + int(Hash2(seed ^ 0xDE6, v) % kDegreeRange);
}
__host__ __device__ inline unsigned Neighbor(uint64_t seed, size_t v, int k, size_t n) {
  uint64_t h = Hash2(seed, v * 64 + k);
  size_t w = (h & 1) ? (v + 1 + (h >> 1) % 64) % n : (h >> 1) % n;
  return static_cast<unsigned>(w);
}

__global__ void BlockDegreeSumKernel(size_t n, uint64_t seed, long long* block_sums) {
  __shared__ long long partial[kScanBlock];
  size_t v = blockIdx.x * size_t(kScanBlock) + threadIdx.x;
  partial[threadIdx.x] = v < n ? Degree(seed, v) : 0;
  __syncthreads();
  for (int stride = kScanBlock / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) block_sums[blockIdx.x] = partial[0];
}

// Exclusive scan of the block's degrees (Hillis-Steele in shared memory) plus the block's base.
__global__ void OffsetsKernel(size_t n, uint64_t seed, const long long* block_base,
                              long long* offsets) {
  __shared__ long long buf[2][kScanBlock];
  size_t v = blockIdx.x * size_t(kScanBlock) + threadIdx.x;
  int in = 0;
  buf[in][threadIdx.x] = (v < n && threadIdx.x > 0) ? Degree(seed, v - 1) : 0;
  __syncthreads();
  for (int stride = 1; stride < kScanBlock; stride *= 2) {
    long long value = buf[in][threadIdx.x];
    if (threadIdx.x >= stride) value += buf[in][threadIdx.x - stride];
    buf[1 - in][threadIdx.x] = value;
    in = 1 - in;
    __syncthreads();
  }
  if (v < n) offsets[v] = block_base[blockIdx.x] + buf[in][threadIdx.x];
}

__global__ void FillEdgesKernel(size_t n, uint64_t seed, const long long* offsets,
                                unsigned* columns) {
  for (size_t v = blockIdx.x * size_t(blockDim.x) + threadIdx.x; v < n;
       v += size_t(gridDim.x) * blockDim.x) {
    long long base = offsets[v];
    int degree = Degree(seed, v);
    for (int k = 0; k < degree; ++k) columns[base + k] = Neighbor(seed, v, k, n);
  }
}

__global__ void BfsLevelKernel(size_t n, const long long* offsets, const unsigned* columns,
                               int* level, unsigned* parent, int current, int* changed) {
  for (size_t v = blockIdx.x * size_t(blockDim.x) + threadIdx.x; v < n;
       v += size_t(gridDim.x) * blockDim.x) {
    if (level[v] != current) continue;
    for (long long e = offsets[v]; e < offsets[v + 1]; ++e) {
      unsigned w = columns[e];
      if (level[w] == -1 && atomicCAS(&level[w], -1, current + 1) == -1) {
        parent[w] = static_cast<unsigned>(v);
        *changed = 1;
      }
    }
  }
}

__global__ void CountReachedKernel(size_t n, const int* level, unsigned long long* reached) {
  unsigned long long local = 0;
  for (size_t v = blockIdx.x * size_t(blockDim.x) + threadIdx.x; v < n;
       v += size_t(gridDim.x) * blockDim.x)
    local += level[v] >= 0;
  atomicAdd(reached, local);
}

template <typename T>
T Fetch(const T* device, size_t index) {
  T value{};
  CUDA_CHECK(cudaMemcpy(&value, device + index, sizeof(T), cudaMemcpyDeviceToHost));
  return value;
}

void BuildGraph(Graph& g, uint64_t seed, KernelTimers& timers) {
  size_t blocks = (g.vertices + kScanBlock - 1) / kScanBlock;
  long long* d_block = nullptr;
  CUDA_CHECK(cudaMalloc(&d_block, blocks * sizeof(long long)));
  timers.Begin("degree_sums");
  BlockDegreeSumKernel<<<static_cast<unsigned>(blocks), kScanBlock>>>(g.vertices, seed, d_block);
  timers.End();
  // The block sums are few: scan them on the host.
  std::vector<long long> base(blocks);
  CUDA_CHECK(cudaMemcpy(base.data(), d_block, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
  long long running = 0;
  for (long long& b : base) {
    long long sum = b;
    b = running;
    running += sum;
  }
  CUDA_CHECK(cudaMemcpy(d_block, base.data(), blocks * sizeof(long long), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(g.offsets + g.vertices, &running, sizeof(long long), cudaMemcpyHostToDevice));
  // The edge count is known now: allocate the edge lists.
  g.edges = static_cast<size_t>(running);
  CUDA_CHECK(cudaMalloc(&g.columns, g.edges * sizeof(unsigned)));
  timers.Begin("offsets_scan");
  OffsetsKernel<<<static_cast<unsigned>(blocks), kScanBlock>>>(g.vertices, seed, d_block, g.offsets);
  timers.End();
  timers.Begin("fill_edges");
  FillEdgesKernel<<<BlocksFor(g.vertices, 256), 256>>>(g.vertices, seed, g.offsets, g.columns);
  timers.End();
  CUDA_CHECK(cudaFree(d_block));
}

// Runs one BFS from source; returns the number of levels.
int Bfs(Graph& g, size_t source, int* d_changed, KernelTimers& timers) {
  CUDA_CHECK(cudaMemset(g.level, 0xFF, g.vertices * sizeof(int)));
  int zero = 0;
  unsigned src = static_cast<unsigned>(source);
  CUDA_CHECK(cudaMemcpy(g.level + source, &zero, sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(g.parent + source, &src, sizeof(unsigned), cudaMemcpyHostToDevice));
  int current = 0;
  for (;; ++current) {
    int changed = 0;
    CUDA_CHECK(cudaMemcpy(d_changed, &changed, sizeof(int), cudaMemcpyHostToDevice));
    timers.Begin("bfs_level");
    BfsLevelKernel<<<BlocksFor(g.vertices, 256), 256>>>(g.vertices, g.offsets, g.columns, g.level,
                                                        g.parent, current, d_changed);
    timers.End();
    CUDA_CHECK(cudaMemcpy(&changed, d_changed, sizeof(int), cudaMemcpyDeviceToHost));
    if (!changed) break;
  }
  return current + 1;
}

// Graph500-style validation of one vertex against a CPU regeneration of the graph.
int CheckVertex(const Graph& g, uint64_t seed, size_t v, size_t source) {
  int bad = 0;
  int degree = Degree(seed, v);
  long long begin = Fetch(g.offsets, v), end = Fetch(g.offsets, v + 1);
  bad += end - begin != degree;
  std::vector<unsigned> cols(degree);
  CUDA_CHECK(cudaMemcpy(cols.data(), g.columns + begin, degree * sizeof(unsigned), cudaMemcpyDeviceToHost));
  int lv = Fetch(g.level, v);
  for (int k = 0; k < degree; ++k) {
    unsigned w = Neighbor(seed, v, k, g.vertices);
    bad += cols[k] != w;
    int lw = Fetch(g.level, w);
    if (lv >= 0) bad += lw < 0 || lw > lv + 1;  // reached, and no out-edge skips a level
  }
  if (v == source) return bad + (lv != 0);
  if (lv > 0) {
    unsigned p = Fetch(g.parent, v);
    bad += Fetch(g.level, p) != lv - 1;
    bool edge = false;
    for (int k = 0; k < Degree(seed, p); ++k) edge |= Neighbor(seed, p, k, g.vertices) == v;
    bad += !edge;
  }
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  WorkloadOptions opt = ParseWorkloadOptions(
      argc, argv, "bfs_graph: breadth-first search on a generated CSR graph",
      "BFS runs from different sources (default 8)");
  if (opt.iters == 0) opt.iters = 8;
  auto t0 = std::chrono::steady_clock::now();

  Graph g;
  double per_vertex = sizeof(long long) + sizeof(int) + sizeof(unsigned) +
                      (kMinDegree + (kDegreeRange - 1) / 2.0) * sizeof(unsigned);
  g.vertices = std::max<size_t>(kScanBlock, static_cast<size_t>(opt.gb * kGiB / per_vertex));
  g.vertices = std::min<size_t>(g.vertices, 0xFFFFFFF0u);  // vertex ids are 32-bit
  // The exact edge count is known only after the scan; the plan uses the expected one.
  g.edges = static_cast<size_t>(g.vertices * (kMinDegree + (kDegreeRange - 1) / 2.0));
  size_t planned = static_cast<size_t>(g.vertices * per_vertex) + sizeof(long long);
  PrintPlan("bfs_graph", opt, planned,
            "vertices=" + std::to_string(g.vertices) + " edges~" + std::to_string(g.edges));
  if (opt.dry_run) return 0;

  CUDA_CHECK(cudaMalloc(&g.offsets, (g.vertices + 1) * sizeof(long long)));
  CUDA_CHECK(cudaMalloc(&g.level, g.vertices * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&g.parent, g.vertices * sizeof(unsigned)));
  KernelTimers timers;
  HostIo host(opt.host_threads);
  BuildGraph(g, opt.seed, timers);
  int* d_changed = nullptr;
  CUDA_CHECK(cudaMalloc(&d_changed, sizeof(int)));
  size_t source = 0;
  int levels = 0;
  size_t bad_snapshot = 0;
  for (long it = 0; it < opt.iters; ++it) {
    source = Hash2(opt.seed ^ 0x50C, it) % g.vertices;
    levels = Bfs(g, source, d_changed, timers);
    for (long k = SnapshotsDue(it, opt.iters, opt.snapshots); k > 0; --k) {
      std::atomic<size_t> unreached{0};
      bad_snapshot += host.Scan("snapshot", g.level, g.vertices, [&](size_t, int lv) {
        if (lv == -1) ++unreached;
        return lv >= -1 && lv < levels;
      });
      bad_snapshot += unreached > g.vertices / 100;  // as the final check: >= 99% reached
    }
  }

  unsigned long long* d_reached = nullptr;
  CUDA_CHECK(cudaMalloc(&d_reached, sizeof(unsigned long long)));
  CUDA_CHECK(cudaMemset(d_reached, 0, sizeof(unsigned long long)));
  timers.Begin("count_reached");
  CountReachedKernel<<<BlocksFor(g.vertices, 256), 256>>>(g.vertices, g.level, d_reached);
  timers.End();
  unsigned long long reached = Fetch(d_reached, 0);
  int bad = CheckVertex(g, opt.seed, source, source);
  for (int k = 0; k < opt.samples; ++k)
    bad += CheckVertex(g, opt.seed, Hash2(opt.seed ^ 0x7E, k) % g.vertices, source);

  for (void* p : {static_cast<void*>(g.offsets), static_cast<void*>(g.columns),
                  static_cast<void*>(g.level), static_cast<void*>(g.parent),
                  static_cast<void*>(d_changed), static_cast<void*>(d_reached)})
    CUDA_CHECK(cudaFree(p));
  // Nearly every vertex has an in-edge, so a BFS that reaches few of them is broken.
  bool reached_most = reached > g.vertices * 0.99;
  bool pass = bad == 0 && reached_most && bad_snapshot == 0;
  char detail[224];
  std::snprintf(detail, sizeof(detail),
                "bad_checks=%d bad_snapshots=%zu levels=%d reached=%llu vertices=%zu edges=%zu", bad,
                bad_snapshot, levels, reached, g.vertices, g.edges);
  return Finish("bfs_graph", pass, timers, host, SecondsSince(t0), detail);
}
