// The CUDA state a rewritten program sees is what CUDA alone would show it: its last error
// (cudaGetLastError / cudaPeekAtLastError) and its current device (cudaGetDevice), whatever CUDA
// calls libmgb makes for itself. Driven through the C API, as a rewritten program calls it, over
// the process-wide runtime and its fake (runtime_fixture.cpp's DefaultCudaApi), and compared with
// the same program run on a fake of its own without mgb.
#include <algorithm>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "mgb/mgb.h"
#include "runtime_fixture.h"

using namespace mgb::test;

namespace {

constexpr int kN = 16;
// Kernels' host stubs are only addresses to the fake: distinct objects give distinct ones.
char twice_kernel;      // data[i] *= 2
char unknown_kernel;    // never registered: CUDA answers cudaErrorInvalidDeviceFunction
char fresh_kernels[8];  // registered by a test, so libmgb has not looked them up yet
float scale_symbol;     // a __constant__ float

const void *Twice() { return &twice_kernel; }
const void *Unknown() { return &unknown_kernel; }

void Register(FakeCudaApi &cuda) {
  cuda.RegisterKernel(Twice(), {sizeof(float *), sizeof(int)}, [](FakeLaunch &launch) {
    float *data = *static_cast<float **>(launch.args[0]);
    int n = *static_cast<int *>(launch.args[1]);
    for (int i = 0; i < n; ++i) data[i] *= 2;
  });
  cuda.RegisterSymbol(&scale_symbol, sizeof scale_symbol);
}

FakeCudaApi &ProcessFake() { return static_cast<FakeCudaApi &>(mgb::runtime::DefaultCudaApi()); }

// The process-wide runtime's mgbd, for every test of this program: GPU 1 is too small for any
// task, so mgbd places work on GPU 0 whatever device the program chose.
// Made before the process-wide runtime, so stopped after its session ends at exit.
const MgbdProcess &ProcessMgbd() {
  static MgbdProcess mgbd({1024 * kMiB, 1 * kMiB});
  static const bool ready = [] {
    setenv("MGB_SOCKET", mgbd.socket().c_str(), 1);
    Register(ProcessFake());
    return true;
  }();
  (void)ready;
  return mgbd;
}

// The program as written: every call is CUDA's own (a fake of its own, no mgb).
struct Plain {
  FakeCudaApi &cuda;
  cudaError_t GetLastError() { return cuda.GetLastError(); }
  cudaError_t PeekAtLastError() { return cuda.PeekAtLastError(); }
  cudaError_t GetDevice(int *d) { return cuda.GetDevice(d); }
  cudaError_t SetDevice(int d) { return cuda.SetDevice(d); }
  cudaError_t Malloc(void **p, size_t n) { return cuda.Malloc(p, n); }
  cudaError_t MallocPitch(void **p, size_t *pitch, size_t w, size_t h) {
    return cuda.MallocPitch(p, pitch, w, h);
  }
  cudaError_t MallocManaged(void **p, size_t n) {
    return cuda.MallocManaged(p, n, cudaMemAttachGlobal);
  }
  cudaError_t Free(void *p) { return cuda.Free(p); }
  cudaError_t Memcpy(void *d, const void *s, size_t n, cudaMemcpyKind k) {
    return cuda.Memcpy(d, s, n, k);
  }
  cudaError_t MemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t st) {
    return cuda.MemcpyAsync(d, s, n, k, st);
  }
  cudaError_t Memcpy2D(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h,
                       cudaMemcpyKind k) {
    return cuda.Memcpy2D(d, dp, s, sp, w, h, k);
  }
  cudaError_t Memset(void *p, int v, size_t n) { return cuda.Memset(p, v, n); }
  cudaError_t MemsetAsync(void *p, int v, size_t n, cudaStream_t st) {
    return cuda.MemsetAsync(p, v, n, st);
  }
  cudaError_t MemcpyToSymbol(const void *sym, const void *s, size_t n) {
    return cuda.MemcpyToSymbol(sym, s, n, 0, cudaMemcpyHostToDevice);
  }
  cudaError_t MemcpyFromSymbol(void *d, const void *sym, size_t n) {
    return cuda.MemcpyFromSymbol(d, sym, n, 0, cudaMemcpyDeviceToHost);
  }
  cudaError_t StreamCreate(cudaStream_t *s) { return cuda.StreamCreateWithFlags(s, 0); }
  cudaError_t StreamCreateWithFlags(cudaStream_t *s, unsigned f) {
    return cuda.StreamCreateWithFlags(s, f);
  }
  cudaError_t StreamDestroy(cudaStream_t s) { return cuda.StreamDestroy(s); }
  cudaError_t StreamSynchronize(cudaStream_t s) { return cuda.StreamSynchronize(s); }
  cudaError_t StreamQuery(cudaStream_t s) { return cuda.StreamQuery(s); }
  cudaError_t StreamWaitEvent(cudaStream_t s, cudaEvent_t e) {
    return cuda.StreamWaitEvent(s, e, 0);
  }
  cudaError_t EventCreate(cudaEvent_t *e) { return cuda.EventCreateWithFlags(e, 0); }
  cudaError_t EventCreateWithFlags(cudaEvent_t *e, unsigned f) {
    return cuda.EventCreateWithFlags(e, f);
  }
  cudaError_t EventRecord(cudaEvent_t e, cudaStream_t s) { return cuda.EventRecord(e, s); }
  cudaError_t EventSynchronize(cudaEvent_t e) { return cuda.EventSynchronize(e); }
  cudaError_t EventQuery(cudaEvent_t e) { return cuda.EventQuery(e); }
  cudaError_t EventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
    return cuda.EventElapsedTime(ms, a, b);
  }
  cudaError_t EventDestroy(cudaEvent_t e) { return cuda.EventDestroy(e); }
  cudaError_t DeviceSetLimit(cudaLimit l, size_t v) { return cuda.DeviceSetLimit(l, v); }
  cudaError_t DeviceEnablePeerAccess(int peer) { return cuda.DeviceEnablePeerAccess(peer, 0); }
  cudaError_t MemcpyPeer(void *d, int dd, const void *src, int sd, size_t n) {
    return cuda.MemcpyPeer(d, dd, src, sd, n);
  }
  cudaError_t DeviceDisablePeerAccess(int peer) { return cuda.DeviceDisablePeerAccess(peer); }
  cudaError_t DeviceSynchronize() { return cuda.DeviceSynchronize(); }
  cudaError_t LaunchKernel(const void *f, float *data, int n, cudaStream_t s) {
    void *args[] = {&data, &n};
    return cuda.LaunchKernel(f, dim3(1), dim3(kN), args, 0, s);
  }
  // kernel<<<1, kN, 0, s>>>(data, n): no call the rewriter renames.
  cudaError_t Launch(const void *f, float *data, int n, cudaStream_t s) {
    return LaunchKernel(f, data, n, s);
  }
  cudaError_t StreamBeginCapture(cudaStream_t s) {
    return cuda.StreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  }
  cudaError_t StreamEndCapture(cudaStream_t s, cudaGraph_t *g) {
    return cuda.StreamEndCapture(s, g);
  }
  cudaError_t GraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g) {
    return cuda.GraphInstantiate(e, g, 0);
  }
  cudaError_t GraphInstantiateWithFlags(cudaGraphExec_t *e, cudaGraph_t g) {
    return cuda.GraphInstantiate(e, g, 0);
  }
  cudaError_t GraphLaunch(cudaGraphExec_t e, cudaStream_t s) { return cuda.GraphLaunch(e, s); }
};

// The same program rewritten: every runtime call the rewriter renames is its mgb_ twin; a launch
// is what the rewriter emits (mgb_prepare, then the un-renamed launch of mgb_arg values).
struct Rewritten {
  FakeCudaApi &cuda;  // the CUDA the program and libmgb share
  cudaError_t GetLastError() { return mgb_cudaGetLastError(); }
  cudaError_t PeekAtLastError() { return mgb_cudaPeekAtLastError(); }
  cudaError_t GetDevice(int *d) { return mgb_cudaGetDevice(d); }
  cudaError_t SetDevice(int d) { return mgb_cudaSetDevice(d); }
  cudaError_t Malloc(void **p, size_t n) { return mgb_cudaMalloc(p, n); }
  cudaError_t MallocPitch(void **p, size_t *pitch, size_t w, size_t h) {
    return mgb_cudaMallocPitch(p, pitch, w, h);
  }
  cudaError_t MallocManaged(void **p, size_t n) {
    return mgb_cudaMallocManaged(p, n, cudaMemAttachGlobal);
  }
  cudaError_t Free(void *p) { return mgb_cudaFree(p); }
  cudaError_t Memcpy(void *d, const void *s, size_t n, cudaMemcpyKind k) {
    return mgb_cudaMemcpy(d, s, n, k);
  }
  cudaError_t MemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind k, cudaStream_t st) {
    return mgb_cudaMemcpyAsync(d, s, n, k, st);
  }
  cudaError_t Memcpy2D(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h,
                       cudaMemcpyKind k) {
    return mgb_cudaMemcpy2D(d, dp, s, sp, w, h, k);
  }
  cudaError_t Memset(void *p, int v, size_t n) { return mgb_cudaMemset(p, v, n); }
  cudaError_t MemsetAsync(void *p, int v, size_t n, cudaStream_t st) {
    return mgb_cudaMemsetAsync(p, v, n, st);
  }
  cudaError_t MemcpyToSymbol(const void *sym, const void *s, size_t n) {
    return mgb_cudaMemcpyToSymbol(sym, s, n, 0, cudaMemcpyHostToDevice);
  }
  cudaError_t MemcpyFromSymbol(void *d, const void *sym, size_t n) {
    return mgb_cudaMemcpyFromSymbol(d, sym, n, 0, cudaMemcpyDeviceToHost);
  }
  cudaError_t StreamCreate(cudaStream_t *s) { return mgb_cudaStreamCreate(s); }
  cudaError_t StreamCreateWithFlags(cudaStream_t *s, unsigned f) {
    return mgb_cudaStreamCreateWithFlags(s, f);
  }
  cudaError_t StreamDestroy(cudaStream_t s) { return mgb_cudaStreamDestroy(s); }
  cudaError_t StreamSynchronize(cudaStream_t s) { return mgb_cudaStreamSynchronize(s); }
  cudaError_t StreamQuery(cudaStream_t s) { return mgb_cudaStreamQuery(s); }
  cudaError_t StreamWaitEvent(cudaStream_t s, cudaEvent_t e) {
    return mgb_cudaStreamWaitEvent(s, e, 0);
  }
  cudaError_t EventCreate(cudaEvent_t *e) { return mgb_cudaEventCreate(e); }
  cudaError_t EventCreateWithFlags(cudaEvent_t *e, unsigned f) {
    return mgb_cudaEventCreateWithFlags(e, f);
  }
  cudaError_t EventRecord(cudaEvent_t e, cudaStream_t s) { return mgb_cudaEventRecord(e, s); }
  cudaError_t EventSynchronize(cudaEvent_t e) { return mgb_cudaEventSynchronize(e); }
  cudaError_t EventQuery(cudaEvent_t e) { return mgb_cudaEventQuery(e); }
  cudaError_t EventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) {
    return mgb_cudaEventElapsedTime(ms, a, b);
  }
  cudaError_t EventDestroy(cudaEvent_t e) { return mgb_cudaEventDestroy(e); }
  cudaError_t DeviceSetLimit(cudaLimit l, size_t v) { return mgb_cudaDeviceSetLimit(l, v); }
  cudaError_t DeviceEnablePeerAccess(int peer) { return mgb_cudaDeviceEnablePeerAccess(peer, 0); }
  cudaError_t MemcpyPeer(void *d, int dd, const void *src, int sd, size_t n) {
    return mgb_cudaMemcpyPeer(d, dd, src, sd, n);
  }
  cudaError_t DeviceDisablePeerAccess(int peer) { return mgb_cudaDeviceDisablePeerAccess(peer); }
  cudaError_t DeviceSynchronize() { return mgb_cudaDeviceSynchronize(); }
  cudaError_t LaunchKernel(const void *f, float *data, int n, cudaStream_t s) {
    void *args[] = {&data, &n};
    return mgb_cudaLaunchKernel(f, dim3(1), dim3(kN), args, 0, s);
  }
  cudaError_t Launch(const void *f, float *data, int n, cudaStream_t s) {
    mgb_prepare(mgb_dim(dim3(1)), mgb_dim(dim3(kN)), f, "program.cu:7", data, n);
    float *real = mgb_arg(data);
    int real_n = mgb_arg(n);
    void *args[] = {&real, &real_n};
    return cuda.LaunchKernel(f, dim3(1), dim3(kN), args, 0, mgb_real_stream(s));
  }
  cudaError_t StreamBeginCapture(cudaStream_t s) {
    return mgb_cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  }
  cudaError_t StreamEndCapture(cudaStream_t s, cudaGraph_t *g) {
    return mgb_cudaStreamEndCapture(s, g);
  }
  cudaError_t GraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g) {
    return mgb_cudaGraphInstantiate(e, g, 0);
  }
  cudaError_t GraphInstantiateWithFlags(cudaGraphExec_t *e, cudaGraph_t g) {
    return mgb_cudaGraphInstantiateWithFlags(e, g, 0);
  }
  cudaError_t GraphLaunch(cudaGraphExec_t e, cudaStream_t s) { return mgb_cudaGraphLaunch(e, s); }
};

// One line of what a program saw: a call's result, then what cudaPeekAtLastError says.
template <class Cuda>
std::string StepLine(Cuda &cuda, const std::string &what, cudaError_t result) {
  std::ostringstream line;
  line << what << " -> " << result << ", peek " << cuda.PeekAtLastError();
  return line.str();
}

// A program that checks the error state after every call, as CUDA programs do with an
// error-checking macro: what it saw, one line per call (the call's result, then what
// cudaPeekAtLastError says; `get` lines are cudaGetLastError, which resets it).
template <class Cuda>
std::vector<std::string> Program(Cuda cuda) {
  std::vector<std::string> seen;
  auto step = [&](const std::string &what, cudaError_t result) {
    seen.push_back(StepLine(cuda, what, result));
  };
  auto get = [&](const std::string &where) {
    seen.push_back("get (" + where + ") -> " + std::to_string(cuda.GetLastError()));
  };
  auto device = [&]() {
    int d = -1;
    cudaError_t result = cuda.GetDevice(&d);
    step("GetDevice = " + std::to_string(d), result);
  };
  get("start");
  device();
  step("SetDevice(1)", cuda.SetDevice(1));
  device();
  step("SetDevice(99)", cuda.SetDevice(99));  // the program's own error...
  device();
  step("GetDevice(nullptr)", cuda.GetDevice(nullptr));
  get("invalid device");  // ...reported once, then gone
  get("after reset");

  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  step("StreamCreate", cuda.StreamCreate(&stream));
  cudaStream_t other = nullptr;
  step("StreamCreateWithFlags", cuda.StreamCreateWithFlags(&other, cudaStreamNonBlocking));
  step("EventCreate", cuda.EventCreate(&start));
  step("EventCreateWithFlags", cuda.EventCreateWithFlags(&stop, cudaEventDefault));
  float *a = nullptr, *b = nullptr, *pitched = nullptr, *managed = nullptr;
  size_t pitch = 0;
  step("Malloc a", cuda.Malloc(reinterpret_cast<void **>(&a), kN * sizeof(float)));
  step("Malloc b", cuda.Malloc(reinterpret_cast<void **>(&b), kN * sizeof(float)));
  step("MallocPitch", cuda.MallocPitch(reinterpret_cast<void **>(&pitched), &pitch, 64, 4));
  float host[kN];
  for (int i = 0; i < kN; ++i) host[i] = float(i);
  step("Memcpy HtoD", cuda.Memcpy(a, host, sizeof host, cudaMemcpyHostToDevice));
  step("MemcpyAsync HtoD", cuda.MemcpyAsync(b, host, sizeof host, cudaMemcpyHostToDevice, stream));
  step("Memset", cuda.Memset(pitched, 0, pitch * 4));
  step("MemsetAsync", cuda.MemsetAsync(b, 0, sizeof host, stream));
  step("Memcpy2D HtoD", cuda.Memcpy2D(pitched, pitch, host, 64, 64, 1, cudaMemcpyHostToDevice));
  float scale = 2.0f;
  step("MemcpyToSymbol", cuda.MemcpyToSymbol(&scale_symbol, &scale, sizeof scale));
  step("DeviceSetLimit", cuda.DeviceSetLimit(cudaLimitMallocHeapSize, 16 * kMiB));
  step("EventRecord start", cuda.EventRecord(start, stream));
  step("launch a", cuda.Launch(Twice(), a, kN, stream));
  device();  // the program's device, wherever the launch ran
  step("EventRecord stop", cuda.EventRecord(stop, stream));
  step("StreamWaitEvent", cuda.StreamWaitEvent(stream, stop));
  step("EventSynchronize", cuda.EventSynchronize(stop));
  float ms = 0;
  step("EventElapsedTime", cuda.EventElapsedTime(&ms, start, stop));
  step("EventQuery", cuda.EventQuery(stop));
  step("StreamQuery", cuda.StreamQuery(stream));
  step("StreamSynchronize", cuda.StreamSynchronize(stream));
  step("cudaLaunchKernel b", cuda.LaunchKernel(Twice(), b, kN, nullptr));
  step("DeviceSynchronize", cuda.DeviceSynchronize());
  float result[kN] = {};
  step("Memcpy DtoH", cuda.Memcpy(result, a, sizeof result, cudaMemcpyDeviceToHost));
  seen.push_back("a[3] = " + std::to_string(result[3]));
  float got = 0;
  step("MemcpyFromSymbol", cuda.MemcpyFromSymbol(&got, &scale_symbol, sizeof got));
  seen.push_back("symbol = " + std::to_string(got));
  step("MallocManaged", cuda.MallocManaged(reinterpret_cast<void **>(&managed), 64));
  get("after the work");

  // The program's own failures, each followed by successful calls: still reported after them.
  float not_device[4];
  step("Free(host pointer)", cuda.Free(not_device));
  step("Memcpy HtoD", cuda.Memcpy(a, host, sizeof host, cudaMemcpyHostToDevice));
  step("launch a", cuda.Launch(Twice(), a, kN, stream));
  step("StreamSynchronize", cuda.StreamSynchronize(stream));
  get("freed a host pointer");
  step("launch of an unknown kernel", cuda.Launch(Unknown(), a, kN, stream));  // not renamed
  step("Memset", cuda.Memset(b, 0, sizeof host));
  step("cudaLaunchKernel b", cuda.LaunchKernel(Twice(), b, kN, nullptr));
  get("unknown kernel");
  step("EventDestroy(invalid)", cuda.EventDestroy(reinterpret_cast<cudaEvent_t>(not_device)));
  step("Memcpy bad size", cuda.Memcpy(a, host, 4096, cudaMemcpyHostToDevice));
  get("two failures: the later one");
  get("after reset");
  return seen;
}

// Work in flight: queries the program makes answer cudaErrorNotReady, and CUDA leaves that as
// the last error.
template <class Cuda>
std::vector<std::string> BusyQueries(Cuda cuda, FakeCudaApi &fake) {
  std::vector<std::string> seen;
  auto step = [&](const std::string &what, cudaError_t result) {
    seen.push_back(StepLine(cuda, what, result));
  };
  cudaStream_t stream = nullptr;
  cudaEvent_t event = nullptr;
  float *a = nullptr;
  step("StreamCreate", cuda.StreamCreate(&stream));
  step("EventCreate", cuda.EventCreate(&event));
  step("Malloc", cuda.Malloc(reinterpret_cast<void **>(&a), kN * sizeof(float)));
  step("launch", cuda.Launch(Twice(), a, kN, stream));
  step("EventRecord", cuda.EventRecord(event, stream));
  fake.SetBusy(true);
  step("EventQuery (busy)", cuda.EventQuery(event));
  step("StreamQuery (busy)", cuda.StreamQuery(stream));
  step("Malloc", cuda.Malloc(reinterpret_cast<void **>(&a), kN * sizeof(float)));
  seen.push_back("get -> " + std::to_string(cuda.GetLastError()));
  float not_device[4];
  step("Free(host pointer)", cuda.Free(not_device));     // an error of the program's...
  step("StreamQuery (busy)", cuda.StreamQuery(stream));  // ...not replaced by a not-ready
  step("EventQuery (busy)", cuda.EventQuery(event));
  seen.push_back("get -> " + std::to_string(cuda.GetLastError()));
  fake.SetBusy(false);
  step("EventQuery (done)", cuda.EventQuery(event));
  step("StreamDestroy", cuda.StreamDestroy(stream));
  step("EventDestroy", cuda.EventDestroy(event));
  seen.push_back("get -> " + std::to_string(cuda.GetLastError()));
  return seen;
}

// Graphs: capture, instantiate, launch.
template <class Cuda>
std::vector<std::string> Graphs(Cuda cuda) {
  std::vector<std::string> seen;
  auto step = [&](const std::string &what, cudaError_t result) {
    seen.push_back(StepLine(cuda, what, result));
  };
  cudaStream_t stream = nullptr;
  float *a = nullptr;
  step("StreamCreate", cuda.StreamCreate(&stream));
  step("Malloc", cuda.Malloc(reinterpret_cast<void **>(&a), kN * sizeof(float)));
  step("Memset", cuda.Memset(a, 0, kN * sizeof(float)));
  step("StreamBeginCapture", cuda.StreamBeginCapture(stream));
  step("launch (captured)", cuda.Launch(Twice(), a, kN, stream));
  cudaGraph_t graph = nullptr;
  step("StreamEndCapture", cuda.StreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr, exec2 = nullptr;
  step("GraphInstantiate", cuda.GraphInstantiate(&exec, graph));
  step("GraphInstantiateWithFlags", cuda.GraphInstantiateWithFlags(&exec2, graph));
  step("GraphLaunch", cuda.GraphLaunch(exec, stream));
  step("GraphLaunch (invalid)", cuda.GraphLaunch(reinterpret_cast<cudaGraphExec_t>(&seen), stream));
  step("StreamSynchronize", cuda.StreamSynchronize(stream));
  step("StreamEndCapture (none under way)", cuda.StreamEndCapture(stream, &graph));
  seen.push_back("get -> " + std::to_string(cuda.GetLastError()));
  step("Free", cuda.Free(a));
  step("StreamDestroy", cuda.StreamDestroy(stream));
  step("StreamDestroy (again)", cuda.StreamDestroy(stream));
  seen.push_back("get -> " + std::to_string(cuda.GetLastError()));
  return seen;
}

// Device limits set before any work (no task yet: libmgb keeps them for the GPUs tasks land on),
// with CUDA's refusals: the sync depth CUDA 12 removed on compute capability 9.0, and no limit.
template <class Cuda>
std::vector<std::string> Limits(Cuda cuda) {
  std::vector<std::string> seen;
  auto step = [&](const std::string &what, cudaError_t result) {
    seen.push_back(StepLine(cuda, what, result));
  };
  step("DeviceSetLimit(sync depth)", cuda.DeviceSetLimit(cudaLimitDevRuntimeSyncDepth, 24));
  seen.push_back("get -> " + std::to_string(cuda.GetLastError()));
  step("DeviceSetLimit(heap)", cuda.DeviceSetLimit(cudaLimitMallocHeapSize, 8 << 20));
  step("DeviceSetLimit(not a limit)", cuda.DeviceSetLimit(static_cast<cudaLimit>(99), 1));
  seen.push_back("get -> " + std::to_string(cuda.GetLastError()));
  return seen;
}

// Peer access between the program's two devices, each way, as a multi-GPU program sets it up
// (cudaSetDevice(i), then cudaDeviceEnablePeerAccess(j)), with CUDA's refusals of a repeat.
template <class Cuda>
std::vector<std::string> PeerAccess(Cuda cuda) {
  std::vector<std::string> seen;
  auto step = [&](const std::string &what, cudaError_t result) {
    seen.push_back(StepLine(cuda, what, result));
  };
  step("SetDevice(0)", cuda.SetDevice(0));
  step("DeviceEnablePeerAccess(1)", cuda.DeviceEnablePeerAccess(1));
  step("SetDevice(1)", cuda.SetDevice(1));
  step("DeviceEnablePeerAccess(0)", cuda.DeviceEnablePeerAccess(0));
  step("DeviceEnablePeerAccess(0) again", cuda.DeviceEnablePeerAccess(0));
  seen.push_back("get -> " + std::to_string(cuda.GetLastError()));
  step("DeviceEnablePeerAccess(1), itself", cuda.DeviceEnablePeerAccess(1));
  step("DeviceDisablePeerAccess(0)", cuda.DeviceDisablePeerAccess(0));
  step("DeviceDisablePeerAccess(0) again", cuda.DeviceDisablePeerAccess(0));
  seen.push_back("get -> " + std::to_string(cuda.GetLastError()));
  step("SetDevice(0)", cuda.SetDevice(0));
  step("DeviceDisablePeerAccess(1)", cuda.DeviceDisablePeerAccess(1));
  return seen;
}

// A multi-GPU program's peer copy: a buffer on each of its devices, one copied into the other.
template <class Cuda>
std::vector<std::string> PeerCopy(Cuda cuda) {
  std::vector<std::string> seen;
  auto step = [&](const std::string &what, cudaError_t result) {
    seen.push_back(StepLine(cuda, what, result));
  };
  float host[kN], back[kN] = {};
  for (int i = 0; i < kN; ++i) host[i] = static_cast<float>(i) + 0.5f;
  float *a = nullptr, *b = nullptr;
  step("SetDevice(0)", cuda.SetDevice(0));
  step("Malloc a", cuda.Malloc(reinterpret_cast<void **>(&a), sizeof host));
  step("Memcpy HtoD a", cuda.Memcpy(a, host, sizeof host, cudaMemcpyHostToDevice));
  step("SetDevice(1)", cuda.SetDevice(1));
  step("Malloc b", cuda.Malloc(reinterpret_cast<void **>(&b), sizeof host));
  step("MemcpyPeer b <- a", cuda.MemcpyPeer(b, 1, a, 0, sizeof host));
  step("Memcpy DtoH b", cuda.Memcpy(back, b, sizeof back, cudaMemcpyDeviceToHost));
  seen.push_back(std::string("copied ") +
                 (std::equal(host, host + kN, back) ? "equal" : "DIFFERENT"));
  step("MemcpyPeer to device 7", cuda.MemcpyPeer(b, 7, a, 0, sizeof host));
  seen.push_back("get -> " + std::to_string(cuda.GetLastError()));
  step("Free a", cuda.Free(a));
  step("Free b", cuda.Free(b));
  return seen;
}

void CheckSame(const std::vector<std::string> &rewritten, const std::vector<std::string> &plain) {
  for (size_t i = 0; i < plain.size() && i < rewritten.size(); ++i) {
    INFO("step " << i);
    CHECK(rewritten[i] == plain[i]);
  }
  CHECK(rewritten.size() == plain.size());
}

}  // namespace

TEST_CASE("libmgb: a rewritten program checking errors after every call sees what CUDA shows it",
          "[runtime][errors]") {
  ProcessMgbd();
  FakeCudaApi plain_cuda(2);
  Register(plain_cuda);
  std::vector<std::string> plain = Program(Plain{plain_cuda});
  std::vector<std::string> rewritten = Program(Rewritten{ProcessFake()});
  CheckSame(rewritten, plain);
  // The comparison has teeth: the program's own errors are there to be seen.
  CHECK(std::count_if(plain.begin(), plain.end(), [](const std::string &line) {
          return line.starts_with("get") && !line.ends_with("-> 0");
        }) == 4);
}

TEST_CASE("libmgb: not-ready queries are the program's own, and busy work shows as in CUDA",
          "[runtime][errors]") {
  ProcessMgbd();
  FakeCudaApi plain_cuda(2);
  Register(plain_cuda);
  std::vector<std::string> plain = BusyQueries(Plain{plain_cuda}, plain_cuda);
  std::vector<std::string> rewritten = BusyQueries(Rewritten{ProcessFake()}, ProcessFake());
  CheckSame(rewritten, plain);
  // Queries answered cudaErrorNotReady, which CUDA does not keep as the last error; the
  // program's own error survived them.
  CHECK(plain[5] == "EventQuery (busy) -> " + std::to_string(cudaErrorNotReady) + ", peek 0");
  CHECK(plain[8] == "get -> 0");
  CHECK(plain[12] == "get -> " + std::to_string(cudaErrorInvalidValue));
}

TEST_CASE("libmgb: graph capture and launch leave the error state CUDA would",
          "[runtime][errors]") {
  ProcessMgbd();
  FakeCudaApi plain_cuda(2);
  Register(plain_cuda);
  std::vector<std::string> plain = Graphs(Plain{plain_cuda});
  std::vector<std::string> rewritten = Graphs(Rewritten{ProcessFake()});
  CheckSame(rewritten, plain);
}

TEST_CASE("libmgb: device limits set before any task are refused where CUDA refuses them",
          "[runtime][errors]") {
  ProcessMgbd();
  FakeCudaApi plain_cuda(2);
  Register(plain_cuda);
  std::vector<std::string> plain = Limits(Plain{plain_cuda});
  std::vector<std::string> rewritten = Limits(Rewritten{ProcessFake()});
  CheckSame(rewritten, plain);
  CHECK(plain[1] == "get -> " + std::to_string(cudaErrorUnsupportedLimit));
  CHECK(plain[4] == "get -> " + std::to_string(cudaErrorUnsupportedLimit));
}

TEST_CASE("libmgb: peer access is set from the program's own device, as CUDA answers it",
          "[runtime][errors]") {
  ProcessMgbd();
  FakeCudaApi plain_cuda(2);
  Register(plain_cuda);
  std::vector<std::string> plain = PeerAccess(Plain{plain_cuda});
  std::vector<std::string> rewritten = PeerAccess(Rewritten{ProcessFake()});
  CheckSame(rewritten, plain);
  CHECK(plain[3] == "DeviceEnablePeerAccess(0) -> 0, peek 0");
  CHECK(plain[5] == "get -> " + std::to_string(cudaErrorPeerAccessAlreadyEnabled));
  CHECK(plain[9] == "get -> " + std::to_string(cudaErrorPeerAccessNotEnabled));
  CHECK(plain[11] == "DeviceDisablePeerAccess(1) -> 0, peek 0");
}

TEST_CASE("libmgb: a peer copy between the program's devices copies wherever mgbd put them",
          "[runtime][errors]") {
  ProcessMgbd();  // GPU 1 holds no task: both buffers live on GPU 0
  FakeCudaApi plain_cuda(2);
  Register(plain_cuda);
  std::vector<std::string> plain = PeerCopy(Plain{plain_cuda});
  std::vector<std::string> rewritten = PeerCopy(Rewritten{ProcessFake()});
  CheckSame(rewritten, plain);
  CHECK(plain[7] == "copied equal");
  CHECK(plain[9] == "get -> " + std::to_string(cudaErrorInvalidDevice));
}

TEST_CASE("libmgb: its own failing CUDA calls never reach the program's cudaGetLastError",
          "[runtime][errors]") {
  ProcessMgbd();
  FakeCudaApi &cuda = ProcessFake();
  REQUIRE(mgb_cudaGetLastError() == cudaSuccess);
  float *a = nullptr;
  REQUIRE(mgb_cudaMalloc(&a, kN * sizeof(float)) == cudaSuccess);
  int n = kN;

  SECTION("a kernel's parameter lookup ends on an error") {
    const void *fresh = &fresh_kernels[0];
    cuda.RegisterKernel(fresh, {sizeof(float *), sizeof(int)}, [](FakeLaunch &) {});
    int failures = cuda.Failures();
    void *args[] = {&a, &n};
    REQUIRE(mgb_cudaLaunchKernel(fresh, dim3(1), dim3(kN), args, 0, nullptr) == cudaSuccess);
    CHECK(cuda.Failures() > failures);  // libmgb's lookup past the last parameter failed...
    CHECK(cuda.PeekAtLastError() == cudaSuccess);  // ...and left nothing in CUDA's slot
    CHECK(mgb_cudaPeekAtLastError() == cudaSuccess);
    CHECK(mgb_cudaGetLastError() == cudaSuccess);
  }
  SECTION("a static task for a kernel CUDA does not know") {
    int failures = cuda.Failures();
    mgb_task task =
        mgb_task_begin(kMiB, mgb_dim3{1, 1, 1}, mgb_dim3{kN, 1, 1}, &fresh_kernels[1], "t.cu:1");
    CHECK(cuda.Failures() > failures);  // cudaFuncGetAttributes failed inside the probe
    CHECK(mgb_cudaPeekAtLastError() == cudaSuccess);
    mgb_task_end(task);
    CHECK(mgb_cudaGetLastError() == cudaSuccess);
  }
  SECTION("a failing query made while libmgb serves a call") {
    // A kernel whose launch (inside mgb_cudaLaunchKernel) queries a stream CUDA does not know,
    // standing for any CUDA call libmgb makes for itself and gets an error from.
    const void *querying = &fresh_kernels[2];
    cuda.RegisterKernel(querying, {sizeof(float *), sizeof(int)}, [&cuda](FakeLaunch &) {
      static char unknown_stream;
      CHECK(cuda.StreamQuery(reinterpret_cast<cudaStream_t>(&unknown_stream)) ==
            cudaErrorInvalidResourceHandle);
      CHECK(cuda.PeekAtLastError() == cudaErrorInvalidResourceHandle);
    });
    void *args[] = {&a, &n};
    REQUIRE(mgb_cudaLaunchKernel(querying, dim3(1), dim3(kN), args, 0, nullptr) == cudaSuccess);
    CHECK(mgb_cudaPeekAtLastError() == cudaSuccess);
    CHECK(mgb_cudaGetLastError() == cudaSuccess);
  }
  SECTION("a twin answering cudaErrorNotReady leaves the last error as CUDA does") {
    cudaStream_t stream = nullptr;
    REQUIRE(mgb_cudaStreamCreate(&stream) == cudaSuccess);
    void *args[] = {&a, &n};
    REQUIRE(mgb_cudaLaunchKernel(Twice(), dim3(1), dim3(kN), args, 0, stream) == cudaSuccess);
    REQUIRE(mgb_cudaSetDevice(-1) == cudaErrorInvalidDevice);
    cuda.SetBusy(true);
    CHECK(mgb_cudaStreamQuery(stream) == cudaErrorNotReady);
    cuda.SetBusy(false);
    CHECK(mgb_cudaGetLastError() == cudaErrorInvalidDevice);
    cuda.SetBusy(true);
    CHECK(mgb_cudaStreamQuery(stream) == cudaErrorNotReady);
    cuda.SetBusy(false);
    CHECK(mgb_cudaGetLastError() == cudaSuccess);
    CHECK(mgb_cudaStreamDestroy(stream) == cudaSuccess);
  }
  SECTION("the program's own earlier error survives libmgb's failing calls") {
    void *args[] = {&a, &n};
    // The program's un-renamed launch fails; then a twin whose own lookups fail.
    REQUIRE(cuda.LaunchKernel(Unknown(), dim3(1), dim3(1), args, 0, nullptr) ==
            cudaErrorInvalidDeviceFunction);
    int failures = cuda.Failures();
    const void *fresh = &fresh_kernels[3];
    cuda.RegisterKernel(fresh, {sizeof(float *), sizeof(int)}, [](FakeLaunch &) {});
    REQUIRE(mgb_cudaLaunchKernel(fresh, dim3(1), dim3(kN), args, 0, nullptr) == cudaSuccess);
    CHECK(cuda.Failures() > failures);
    CHECK(mgb_cudaPeekAtLastError() == cudaErrorInvalidDeviceFunction);
    mgb_real_ptr(a);  // entry points that are no CUDA call keep it too
    mgb_task_end(mgb_task_begin(kMiB, mgb_dim3{1, 1, 1}, mgb_dim3{1, 1, 1}, nullptr, "t.cu:2"));
    CHECK(mgb_cudaGetLastError() == cudaErrorInvalidDeviceFunction);
    CHECK(mgb_cudaGetLastError() == cudaSuccess);
  }
  SECTION("a twin's error is reported after later twins whose own calls fail") {
    REQUIRE(mgb_cudaSetDevice(-1) == cudaErrorInvalidDevice);
    const void *fresh = &fresh_kernels[4];
    cuda.RegisterKernel(fresh, {sizeof(float *), sizeof(int)}, [](FakeLaunch &) {});
    void *args[] = {&a, &n};
    int failures = cuda.Failures();
    REQUIRE(mgb_cudaLaunchKernel(fresh, dim3(1), dim3(kN), args, 0, nullptr) == cudaSuccess);
    CHECK(cuda.Failures() > failures);
    CHECK(mgb_cudaGetLastError() == cudaErrorInvalidDevice);
    CHECK(mgb_cudaGetLastError() == cudaSuccess);
  }
  CHECK(mgb_cudaFree(a) == cudaSuccess);
  CHECK(mgb_cudaGetLastError() == cudaSuccess);
}

TEST_CASE("libmgb: cudaGetDevice answers the program's own device, per thread",
          "[runtime][errors]") {
  ProcessMgbd();
  FakeCudaApi &cuda = ProcessFake();
  int device = -1;
  std::thread([&] { mgb_cudaGetDevice(&device); }).join();  // a thread that set none
  CHECK(device == 0);                                       // CUDA's default
  REQUIRE(mgb_cudaSetDevice(0) == cudaSuccess);
  REQUIRE(mgb_cudaGetDevice(&device) == cudaSuccess);
  CHECK(device == 0);
  REQUIRE(mgb_cudaSetDevice(1) == cudaSuccess);
  float *a = nullptr;
  REQUIRE(mgb_cudaMalloc(&a, kN * sizeof(float)) == cudaSuccess);
  int n = kN;
  void *args[] = {&a, &n};
  REQUIRE(mgb_cudaLaunchKernel(Twice(), dim3(1), dim3(kN), args, 0, nullptr) == cudaSuccess);
  // mgbd placed the work on GPU 0 (GPU 1 is too small) and libmgb made it current...
  CHECK(cuda.DeviceOf(mgb_real_ptr(a)) == 0);
  int current = -1;
  REQUIRE(cuda.GetDevice(&current) == cudaSuccess);
  CHECK(current == 0);
  // ...but the program keeps its own numbering.
  REQUIRE(mgb_cudaGetDevice(&device) == cudaSuccess);
  CHECK(device == 1);
  CHECK(mgb_cudaSetDevice(2) == cudaErrorInvalidDevice);
  REQUIRE(mgb_cudaGetDevice(&device) == cudaSuccess);
  CHECK(device == 1);
  CHECK(mgb_cudaGetLastError() == cudaErrorInvalidDevice);
  // Another thread has CUDA's default device and its own last error.
  int other_device = -1;
  cudaError_t other_error = cudaErrorUnknown;
  std::thread([&] {
    mgb_cudaGetDevice(&other_device);
    other_error = mgb_cudaGetLastError();
    (void)mgb_cudaSetDevice(7);
  }).join();
  CHECK(other_device == 0);
  CHECK(other_error == cudaSuccess);
  CHECK(mgb_cudaGetLastError() == cudaSuccess);  // the other thread's error stayed there
  CHECK(mgb_cudaFree(a) == cudaSuccess);
}
