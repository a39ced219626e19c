// GPU test of the lazy layer: memory allocated and filled in init() (outside any task), pointers
// kept in a struct, the launch in run() with mgb_prepare + mgb_arg, a stream created at start,
// __constant__ data written before any GPU was chosen. Checked against the CPU.
#include <cmath>
#include <vector>

#include <mgb/mgb.h>

static const char *kExampleName = "runtime_lazy_path";
#include "example_check.h"

__constant__ float kScale[2];

struct Model {
  float *weights;
  float *input;
  float *output;
  int n;
};

__global__ void Apply(Model m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m.n) m.output[i] = kScale[0] * m.weights[i] * m.input[i] + kScale[1];
}

static Model model;
static cudaStream_t stream;
static std::vector<float> weights, input;

static void Init(int n) {
  model.n = n;
  weights.resize(n);
  input.resize(n);
  for (int i = 0; i < n; ++i) {
    weights[i] = 0.5f + (i % 7);
    input[i] = std::sqrt(float(i));
  }
  CHECK_CUDA(mgb_cudaStreamCreate(&stream));
  CHECK_CUDA(mgb_cudaMalloc(&model.weights, n * sizeof(float)));
  CHECK_CUDA(mgb_cudaMalloc(&model.input, n * sizeof(float)));
  CHECK_CUDA(mgb_cudaMalloc(&model.output, n * sizeof(float)));
  CHECK_CUDA(mgb_cudaMemcpy(model.weights, weights.data(), n * sizeof(float),
                            cudaMemcpyHostToDevice));
  CHECK_CUDA(mgb_cudaMemcpyAsync(model.input, input.data(), n * sizeof(float),
                                 cudaMemcpyHostToDevice, stream));
  CHECK_CUDA(mgb_cudaMemset(model.output, 0, n * sizeof(float)));
  const float scale[2] = {2.0f, 1.0f};
  CHECK_CUDA(mgb_cudaMemcpyToSymbol(kScale, scale, sizeof scale));
}

static void Run() {
  dim3 block(128), grid((model.n + 127) / 128);
  CHECK_CUDA(mgb_prepare(mgb_dim(grid), mgb_dim(block), (const void *)Apply, "lazy_path.cu:run",
                         model));
  Apply<<<grid, block, 0, mgb_real_stream(stream)>>>(mgb_arg(model));
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(mgb_cudaStreamSynchronize(stream));
}

int main() {
  const int n = 1 << 20;
  Init(n);
  std::vector<float> expected(n);
  for (int i = 0; i < n; ++i) expected[i] = 2.0f * weights[i] * input[i] + 1.0f;
  std::fill(input.begin(), input.end(), -1.0f);  // host data was captured at call time
  Run();
  std::vector<float> out(n);
  CHECK_CUDA(mgb_cudaMemcpy(out.data(), model.output, n * sizeof(float), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < n && ok; ++i) ok = std::fabs(out[i] - expected[i]) <= 1e-4f * std::fabs(expected[i]) + 1e-5f;
  int device = -1;
  CHECK_CUDA(cudaGetDevice(&device));
  std::printf("lazy task ran on GPU %d\n", device);
  CHECK_CUDA(mgb_cudaFree(model.weights));
  CHECK_CUDA(mgb_cudaFree(model.input));
  CHECK_CUDA(mgb_cudaFree(model.output));
  CHECK_CUDA(mgb_cudaStreamDestroy(stream));
  return Verdict(kExampleName, ok);
}
