// mlp_train: trains a two-layer perceptron (ReLU hidden layer, softmax output) by backpropagation
// with mini-batch SGD over a large synthetic data set held in device memory (like Rodinia's
// backprop, at today's sizes). Weights are initialised on the host and copied; the data set
// (class centroids plus noise) is made on the host and streamed in, and with --snapshots read
// again now and then, as a data loader that cannot keep the data set resident does.
// Check: the first SGD step against a CPU reference, the final network's logits on sampled rows
// against a CPU forward pass, and a falling loss.
#include "workload_common.cuh"

#include <cmath>
#include <random>
#include <string>

namespace {

constexpr int kIn = 512;       // features
constexpr int kHidden = 512;
constexpr int kClasses = 16;
constexpr int kBatch = 4096;
constexpr int kCheckBatch = 256;  // rows of the CPU-checked first step
constexpr float kLearningRate = 0.05f;
constexpr int kTile = 16;

// Device buffers of the network and its gradients.
struct Network {
  float *w1, *b1, *w2, *b2;      // weights
  float *dw1, *db1, *dw2, *db2;  // gradients
};
// Per-batch activations.
struct Activations {
  float *z1, *a1, *z2, *dz2, *da1;
  float* loss;  // one per row
  float* rows;  // gathered input rows (for prediction on sampled rows)
  int* labels;  // gathered labels
};
struct DataSet {
  size_t rows = 0;
  float* x = nullptr;  // rows x kIn
  int* y = nullptr;    // rows
};

__host__ __device__ inline int Label(uint64_t seed, size_t row) {
  return static_cast<int>(Hash2(seed ^ 0xC1A55u, row) % kClasses);
}
__host__ __device__ inline float Centroid(uint64_t seed, int label, int col) {
  return 2.0f * UnitFloat(Hash2(seed ^ 0xCE47u, size_t(label) * kIn + col)) - 1.0f;
}
__host__ __device__ inline float Noise(uint64_t seed, size_t row, int col) {
  return UnitFloat(Hash2(seed, row * kIn + col)) - 0.5f;
}
__host__ __device__ inline float Feature(uint64_t seed, size_t row, int col) {
  return Centroid(seed, Label(seed, row), col) + Noise(seed, row, col);
}

// Feature() for the whole data set at the cost of one hash per value, as a loader would make it:
// the class centroids from a table, each row's label once per row.
class FeatureMaker {
 public:
  explicit FeatureMaker(uint64_t seed) : seed_(seed), centroids_(size_t(kClasses) * kIn) {
    for (int label = 0; label < kClasses; ++label)
      for (int col = 0; col < kIn; ++col) centroids_[size_t(label) * kIn + col] = Centroid(seed, label, col);
  }
  float operator()(size_t i) const {
    thread_local size_t row = ~size_t(0);
    thread_local int label = 0;
    if (i / kIn != row) {
      row = i / kIn;
      label = Label(seed_, row);
    }
    int col = static_cast<int>(i % kIn);
    return centroids_[size_t(label) * kIn + col] + Noise(seed_, row, col);
  }

 private:
  uint64_t seed_;
  std::vector<float> centroids_;
};

// C[MxN] = op(A)[MxK] * op(B)[KxN], shared-memory tiles; op transposes when the flag is set.
template <bool kTransA, bool kTransB>
__global__ void GemmKernel(int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                           float* c, int ldc) {
  __shared__ float ta[kTile][kTile + 1];
  __shared__ float tb[kTile][kTile + 1];
  int row = blockIdx.y * kTile + threadIdx.y;
  int col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0;
  for (int k0 = 0; k0 < k; k0 += kTile) {
    int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    ta[threadIdx.y][threadIdx.x] =
        (row < m && ka < k) ? (kTransA ? a[size_t(ka) * lda + row] : a[size_t(row) * lda + ka]) : 0;
    tb[threadIdx.y][threadIdx.x] =
        (kb < k && col < n) ? (kTransB ? b[size_t(col) * ldb + kb] : b[size_t(kb) * ldb + col]) : 0;
    __syncthreads();
    for (int kk = 0; kk < kTile; ++kk) acc += ta[threadIdx.y][kk] * tb[kk][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) c[size_t(row) * ldc + col] = acc;
}

__global__ void BiasReluKernel(float* z, float* a, const float* bias, int rows, int cols,
                               bool relu) {
  size_t total = size_t(rows) * cols;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total;
       i += size_t(gridDim.x) * blockDim.x) {
    float v = z[i] + bias[i % cols];
    z[i] = v;
    if (relu) a[i] = v > 0 ? v : 0;
  }
}

// Softmax + cross-entropy per row; writes dL/dz2 (already divided by the batch size).
__global__ void SoftmaxLossKernel(const float* z2, const int* labels, float* dz2, float* loss,
                                  int rows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* z = z2 + size_t(r) * kClasses;
  float mx = z[0];
  for (int c = 1; c < kClasses; ++c) mx = fmaxf(mx, z[c]);
  float sum = 0;
  for (int c = 0; c < kClasses; ++c) sum += expf(z[c] - mx);
  int label = labels[r];
  for (int c = 0; c < kClasses; ++c) {
    float p = expf(z[c] - mx) / sum;
    dz2[size_t(r) * kClasses + c] = (p - (c == label ? 1.0f : 0.0f)) / rows;
  }
  loss[r] = -(z[label] - mx - logf(sum));
}

__global__ void ReluBackwardKernel(float* da1, const float* z1, size_t total) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total;
       i += size_t(gridDim.x) * blockDim.x)
    if (z1[i] <= 0) da1[i] = 0;
}

__global__ void ColumnSumKernel(const float* m, float* out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float acc = 0;
  for (int r = 0; r < rows; ++r) acc += m[size_t(r) * cols + c];
  out[c] = acc;
}

__global__ void SgdKernel(float* w, const float* dw, size_t n, float lr) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    w[i] -= lr * dw[i];
}

__global__ void GatherRowsKernel(const float* x, const int* y, const size_t* picks, int count,
                                 float* rows, int* labels) {
  int r = blockIdx.x;
  for (int c = threadIdx.x; c < kIn; c += blockDim.x) rows[size_t(r) * kIn + c] = x[picks[r] * kIn + c];
  if (threadIdx.x == 0 && r < count) labels[r] = y[picks[r]];
}

template <bool kTransA, bool kTransB>
void Gemm(KernelTimers& timers, const char* name, int m, int n, int k, const float* a, int lda,
          const float* b, int ldb, float* c, int ldc) {
  dim3 block(kTile, kTile);
  dim3 grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile);
  timers.Begin(name);
  GemmKernel<kTransA, kTransB><<<grid, block>>>(m, n, k, a, lda, b, ldb, c, ldc);
  timers.End();
}

void Forward(const Network& net, Activations& act, const float* x, int rows, KernelTimers& t) {
  Gemm<false, false>(t, "gemm_fwd1", rows, kHidden, kIn, x, kIn, net.w1, kHidden, act.z1, kHidden);
  t.Begin("bias_relu");
  BiasReluKernel<<<BlocksFor(size_t(rows) * kHidden, 256), 256>>>(act.z1, act.a1, net.b1, rows,
                                                                  kHidden, true);
  t.End();
  Gemm<false, false>(t, "gemm_fwd2", rows, kClasses, kHidden, act.a1, kHidden, net.w2, kClasses,
                     act.z2, kClasses);
  t.Begin("bias_relu");
  BiasReluKernel<<<BlocksFor(size_t(rows) * kClasses, 256), 256>>>(act.z2, nullptr, net.b2, rows,
                                                                   kClasses, false);
  t.End();
}

void TrainStep(Network& net, Activations& act, const float* x, const int* y, int rows,
               KernelTimers& t) {
  Forward(net, act, x, rows, t);
  t.Begin("softmax_loss");
  SoftmaxLossKernel<<<(rows + 127) / 128, 128>>>(act.z2, y, act.dz2, act.loss, rows);
  t.End();
  Gemm<true, false>(t, "gemm_dw2", kHidden, kClasses, rows, act.a1, kHidden, act.dz2, kClasses,
                    net.dw2, kClasses);
  t.Begin("column_sum");
  ColumnSumKernel<<<1, 128>>>(act.dz2, net.db2, rows, kClasses);
  t.End();
  Gemm<false, true>(t, "gemm_da1", rows, kHidden, kClasses, act.dz2, kClasses, net.w2, kClasses,
                    act.da1, kHidden);
  t.Begin("relu_backward");
  ReluBackwardKernel<<<BlocksFor(size_t(rows) * kHidden, 256), 256>>>(act.da1, act.z1,
                                                                      size_t(rows) * kHidden);
  t.End();
  Gemm<true, false>(t, "gemm_dw1", kIn, kHidden, rows, x, kIn, act.da1, kHidden, net.dw1, kHidden);
  t.Begin("column_sum");
  ColumnSumKernel<<<(kHidden + 127) / 128, 128>>>(act.da1, net.db1, rows, kHidden);
  t.End();
  t.Begin("sgd");
  SgdKernel<<<BlocksFor(size_t(kIn) * kHidden, 256), 256>>>(net.w1, net.dw1, size_t(kIn) * kHidden, kLearningRate);
  SgdKernel<<<1, 256>>>(net.b1, net.db1, kHidden, kLearningRate);
  SgdKernel<<<BlocksFor(size_t(kHidden) * kClasses, 256), 256>>>(net.w2, net.dw2, size_t(kHidden) * kClasses, kLearningRate);
  SgdKernel<<<1, 32>>>(net.b2, net.db2, kClasses, kLearningRate);
  t.End();
}

// Host copy of the parameters, the CPU reference's view of the network.
struct HostNet {
  std::vector<float> w1, b1, w2, b2;
};

HostNet InitialWeights(uint64_t seed) {
  std::mt19937_64 rng(seed);
  HostNet h;
  auto fill = [&](std::vector<float>& v, size_t n, float scale) {
    std::uniform_real_distribution<float> dist(-scale, scale);
    v.resize(n);
    for (float& f : v) f = dist(rng);
  };
  fill(h.w1, size_t(kIn) * kHidden, std::sqrt(6.0f / (kIn + kHidden)));
  h.b1.assign(kHidden, 0.0f);
  fill(h.w2, size_t(kHidden) * kClasses, std::sqrt(6.0f / (kHidden + kClasses)));
  h.b2.assign(kClasses, 0.0f);
  return h;
}

// CPU forward for one input row: returns the logits; also the hidden pre-activations.
std::vector<float> CpuForward(const HostNet& h, const float* x, std::vector<float>* z1_out) {
  std::vector<float> z1(kHidden), z2(kClasses);
  for (int j = 0; j < kHidden; ++j) {
    double acc = h.b1[j];
    for (int i = 0; i < kIn; ++i) acc += double(x[i]) * h.w1[size_t(i) * kHidden + j];
    z1[j] = float(acc);
  }
  for (int c = 0; c < kClasses; ++c) {
    double acc = h.b2[c];
    for (int j = 0; j < kHidden; ++j) acc += double(std::max(z1[j], 0.0f)) * h.w2[size_t(j) * kClasses + c];
    z2[c] = float(acc);
  }
  if (z1_out) *z1_out = z1;
  return z2;
}

// CPU reference of one SGD step on rows [0, rows) of the data set.
HostNet CpuStep(HostNet h, uint64_t seed, int rows) {
  HostNet grad{std::vector<float>(h.w1.size()), std::vector<float>(kHidden),
               std::vector<float>(h.w2.size()), std::vector<float>(kClasses)};
  std::vector<float> x(kIn), z1;
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < kIn; ++i) x[i] = Feature(seed, r, i);
    std::vector<float> z2 = CpuForward(h, x.data(), &z1);
    float mx = *std::max_element(z2.begin(), z2.end());
    double sum = 0;
    for (float v : z2) sum += std::exp(v - mx);
    int label = Label(seed, r);
    std::vector<float> dz2(kClasses), da1(kHidden, 0.0f);
    for (int c = 0; c < kClasses; ++c)
      dz2[c] = float((std::exp(z2[c] - mx) / sum - (c == label)) / rows);
    for (int j = 0; j < kHidden; ++j) {
      for (int c = 0; c < kClasses; ++c) {
        grad.w2[size_t(j) * kClasses + c] += std::max(z1[j], 0.0f) * dz2[c];
        da1[j] += dz2[c] * h.w2[size_t(j) * kClasses + c];
      }
      if (z1[j] <= 0) da1[j] = 0;
      grad.b1[j] += da1[j];
    }
    for (int c = 0; c < kClasses; ++c) grad.b2[c] += dz2[c];
    for (int i = 0; i < kIn; ++i)
      for (int j = 0; j < kHidden; ++j) grad.w1[size_t(i) * kHidden + j] += x[i] * da1[j];
  }
  auto apply = [](std::vector<float>& w, const std::vector<float>& g) {
    for (size_t i = 0; i < w.size(); ++i) w[i] -= kLearningRate * g[i];
  };
  apply(h.w1, grad.w1);
  apply(h.b1, grad.b1);
  apply(h.w2, grad.w2);
  apply(h.b2, grad.b2);
  return h;
}

HostNet Download(const Network& net) {
  HostNet h{std::vector<float>(size_t(kIn) * kHidden), std::vector<float>(kHidden),
            std::vector<float>(size_t(kHidden) * kClasses), std::vector<float>(kClasses)};
  CUDA_CHECK(cudaMemcpy(h.w1.data(), net.w1, h.w1.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h.b1.data(), net.b1, h.b1.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h.w2.data(), net.w2, h.w2.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h.b2.data(), net.b2, h.b2.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return h;
}

int CountDifferent(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    bad += !(std::fabs(got[i] - want[i]) <= tol * (1.0f + std::fabs(want[i])));
  return bad;
}

// Compares the update each parameter received (after - before), which is much smaller than the
// parameter itself, so a wrong gradient cannot hide inside the tolerance.
int CountDifferentUpdates(const std::vector<float>& got, const std::vector<float>& want,
                          const std::vector<float>& before) {
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    float du_got = got[i] - before[i], du_want = want[i] - before[i];
    bad += !(std::fabs(du_got - du_want) <= 1e-2f * std::fabs(du_want) + 2e-6f);
  }
  return bad;
}

float MeanLoss(const Activations& act, int rows) {
  std::vector<float> loss(rows);
  CUDA_CHECK(cudaMemcpy(loss.data(), act.loss, rows * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float v : loss) sum += v;
  return float(sum / rows);
}

size_t ParamFloats() { return size_t(kIn) * kHidden + kHidden + size_t(kHidden) * kClasses + kClasses; }
size_t ActivationFloats() { return size_t(kBatch) * (3 * kHidden + 2 * kClasses + 1 + kIn) + kBatch; }

}  // namespace

int main(int argc, char** argv) {
  WorkloadOptions opt = ParseWorkloadOptions(
      argc, argv, "mlp_train: backpropagation training of a 512-512-16 perceptron",
      "SGD steps of 4096 rows (default: one epoch, at least 2000)");
  auto t0 = std::chrono::steady_clock::now();
  size_t fixed = (2 * ParamFloats() + ActivationFloats()) * sizeof(float);
  DataSet data;
  double budget = opt.gb * kGiB - double(fixed);
  data.rows = std::max<size_t>(kBatch, static_cast<size_t>(budget / ((kIn + 1) * sizeof(float))));
  if (opt.iters == 0) opt.iters = std::max<long>(2000, long(data.rows / kBatch));
  size_t bytes = fixed + data.rows * (kIn * sizeof(float) + sizeof(int));
  PrintPlan("mlp_train", opt, bytes,
            "rows=" + std::to_string(data.rows) + " layers=512-512-16 batch=4096");
  if (opt.dry_run) return 0;

  // Host phase: initial weights from a seeded generator, copied to the device.
  HostNet initial = InitialWeights(opt.seed);
  Network net{};
  Activations act{};
  CUDA_CHECK(cudaMalloc(&data.x, data.rows * kIn * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&data.y, data.rows * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&net.w1, initial.w1.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&net.b1, kHidden * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&net.w2, initial.w2.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&net.b2, kClasses * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&net.dw1, initial.w1.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&net.db1, kHidden * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&net.dw2, initial.w2.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&net.db2, kClasses * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&act.z1, size_t(kBatch) * kHidden * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&act.a1, size_t(kBatch) * kHidden * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&act.da1, size_t(kBatch) * kHidden * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&act.z2, size_t(kBatch) * kClasses * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&act.dz2, size_t(kBatch) * kClasses * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&act.loss, size_t(kBatch) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&act.rows, size_t(kBatch) * kIn * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&act.labels, size_t(kBatch) * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(net.w1, initial.w1.data(), initial.w1.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(net.b1, initial.b1.data(), kHidden * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(net.w2, initial.w2.data(), initial.w2.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(net.b2, initial.b2.data(), kClasses * sizeof(float), cudaMemcpyHostToDevice));

  KernelTimers timers;
  HostIo host(opt.host_threads);
  // The data set is read on the host (here: generated) and streamed in; each --snapshots reads
  // it again, as a loader that does not keep an epoch's data resident does.
  const FeatureMaker features(opt.seed);
  auto load_data = [&](const char* phase) {
    host.Upload(phase, data.x, data.rows * kIn, features);
    host.Upload(phase, data.y, data.rows, [&](size_t row) { return Label(opt.seed, row); });
  };
  load_data("input");

  // Step 0 on a small batch, checked against the CPU reference.
  TrainStep(net, act, data.x, data.y, kCheckBatch, timers);
  float first_loss = MeanLoss(act, kCheckBatch);
  HostNet want = CpuStep(initial, opt.seed, kCheckBatch);
  HostNet got = Download(net);
  int bad_step = CountDifferentUpdates(got.w1, want.w1, initial.w1) +
                 CountDifferentUpdates(got.b1, want.b1, initial.b1) +
                 CountDifferentUpdates(got.w2, want.w2, initial.w2) +
                 CountDifferentUpdates(got.b2, want.b2, initial.b2);

  // Training: mini-batches walk through the data set.
  size_t batches = data.rows / kBatch;
  for (long step = 1; step < opt.iters; ++step) {
    size_t b = size_t(step) % batches;
    TrainStep(net, act, data.x + b * kBatch * kIn, data.y + b * kBatch, kBatch, timers);
    for (long k = SnapshotsDue(step, opt.iters, opt.snapshots); k > 0; --k) load_data("snapshot");
  }
  float last_loss = MeanLoss(act, kBatch);

  // Prediction on sampled rows, checked against a CPU forward pass of the trained weights.
  std::vector<size_t> picks(opt.samples);
  for (int k = 0; k < opt.samples; ++k) picks[k] = Hash2(opt.seed ^ 0x5A, k) % data.rows;
  int count = std::min<int>(opt.samples, kBatch);
  size_t* d_picks = nullptr;
  CUDA_CHECK(cudaMalloc(&d_picks, count * sizeof(size_t)));
  CUDA_CHECK(cudaMemcpy(d_picks, picks.data(), count * sizeof(size_t), cudaMemcpyHostToDevice));
  timers.Begin("gather");
  GatherRowsKernel<<<count, 128>>>(data.x, data.y, d_picks, count, act.rows, act.labels);
  timers.End();
  Forward(net, act, act.rows, count, timers);
  std::vector<float> logits(size_t(count) * kClasses);
  CUDA_CHECK(cudaMemcpy(logits.data(), act.z2, logits.size() * sizeof(float), cudaMemcpyDeviceToHost));
  HostNet trained = Download(net);
  int bad_predict = 0, correct = 0;
  std::vector<float> x(kIn);
  for (int k = 0; k < count; ++k) {
    for (int i = 0; i < kIn; ++i) x[i] = Feature(opt.seed, picks[k], i);
    std::vector<float> z2 = CpuForward(trained, x.data(), nullptr);
    std::vector<float> row(logits.begin() + size_t(k) * kClasses, logits.begin() + size_t(k + 1) * kClasses);
    bad_predict += CountDifferent(row, z2, 1e-3f);
    correct += int(std::max_element(row.begin(), row.end()) - row.begin()) == Label(opt.seed, picks[k]);
  }

  for (float* p : {data.x, net.w1, net.b1, net.w2, net.b2, net.dw1, net.db1, net.dw2, net.db2,
                   act.z1, act.a1, act.da1, act.z2, act.dz2, act.loss, act.rows})
    CUDA_CHECK(cudaFree(p));
  CUDA_CHECK(cudaFree(data.y));
  CUDA_CHECK(cudaFree(act.labels));
  CUDA_CHECK(cudaFree(d_picks));

  bool learned = std::isfinite(last_loss) && last_loss < first_loss;
  bool pass = bad_step == 0 && bad_predict == 0 && learned;
  char detail[256];
  std::snprintf(detail, sizeof(detail),
                "bad_step=%d bad_predict=%d loss_first=%.4f loss_last=%.4f sample_accuracy=%.3f",
                bad_step, bad_predict, first_loss, last_loss, double(correct) / count);
  return Finish("mlp_train", pass, timers, host, SecondsSince(t0), detail);
}
