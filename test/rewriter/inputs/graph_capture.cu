// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --allow-empty
// RUN: %strip-checks %t/first/graph_capture.cu | FileCheck %s
// RUN: %golden %t %s
// CHECK-MESSAGES-NOT: warning
// Calls in CHECK's argument keep their text (CHECK prints #call when one fails): `#define`s
// route them to their twins.
// CHECK-DAG: {{^}}#define cudaGraphInstantiate mgb_cudaGraphInstantiate
// CHECK-DAG: {{^}}#define cudaGraphLaunch mgb_cudaGraphLaunch
// CHECK-DAG: {{^}}#define cudaStreamBeginCapture mgb_cudaStreamBeginCapture
// CHECK-DAG: {{^}}#define cudaStreamEndCapture mgb_cudaStreamEndCapture
// Found on third-party code: CUDA graphs. Launches made by a helper are captured from a stream,
// the graph is instantiated and launched in a loop. The graph belongs to the task of its memory:
// mgb_cudaStreamBeginCapture places that memory on a GPU before the capture begins (binding
// inside a capture would allocate and copy, which invalidates it), and every launch of the graph
// runs on that GPU: no task per graph launch. Two shapes: memory already used before the
// capture, and memory first used inside it.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                                            \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__);                  \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

__global__ void axpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] += a * x[i];
}

__global__ void scale(float *y, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] *= s;
}

static void step(float *x, float *y, int n, cudaStream_t stream) {
  axpy<<<(n + 255) / 256, 256, 0, stream>>>(y, x, 0.5f, n);
  scale<<<(n + 255) / 256, 256, 0, stream>>>(y, 0.75f, n);
}

// The host's y after `steps` steps from y = 0, x[i] = i % 13.
static double expected_sum(int n, int steps) {
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    float x = (float)(i % 13), y = 0.f;
    for (int s = 0; s < steps; ++s) {
      y += 0.5f * x;
      y *= 0.75f;
    }
    sum += y;
  }
  return sum;
}

static double run_graph(int n, int launches, bool warm_up) {
  cudaStream_t stream;
  CHECK(cudaStreamCreate(&stream));
  float *x, *y;
  CHECK(cudaMalloc((void **)&x, n * sizeof(float)));
  CHECK(cudaMalloc((void **)&y, n * sizeof(float)));
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i)
    h[i] = (float)(i % 13);
  CHECK(cudaMemcpy(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(y, 0, n * sizeof(float)));
  int steps = 0;
  if (warm_up) { // the memory is placed by this launch, before the capture
    step(x, y, n, stream);
    CHECK(cudaStreamSynchronize(stream));
    ++steps;
  }
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  // CHECK: {{^ *}}CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int k = 0; k < 4; ++k)
    step(x, y, n, stream);
  // CHECK: {{^ *}}CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaStreamEndCapture(stream, &graph));
  // CHECK: {{^ *}}CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  // The older five-argument form (cuda_runtime.h) has a twin too.
  cudaGraphExec_t unused;
  // CHECK: {{^ *}}CHECK(cudaGraphInstantiate(&unused, graph, nullptr, nullptr, 0));
  CHECK(cudaGraphInstantiate(&unused, graph, nullptr, nullptr, 0));
  CHECK(cudaGraphExecDestroy(unused));
  for (int i = 0; i < launches; ++i) {
    // CHECK: {{^ *}}CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaGraphLaunch(exec, stream));
    steps += 4;
  }
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaMemcpy(h.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float v : h)
    sum += v;
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaStreamDestroy(stream));
  double expected = expected_sum(n, steps);
  printf("graph of %d launches: sum %.3f, %s\n", launches, sum,
         fabs(sum - expected) <= 1e-4 * fabs(expected) + 1e-3 ? "as expected" : "WRONG");
  return fabs(sum - expected) <= 1e-4 * fabs(expected) + 1e-3 ? 0 : 1;
}

int main() {
  int failures = 0;
  failures += run_graph(1 << 16, 200, true);  // memory placed by an earlier launch
  failures += run_graph(1 << 12, 50, false);  // memory first used inside the capture
  printf("%s\n", failures == 0 ? "PASS" : "FAIL");
  return failures;
}
