// CUDA graphs. A captured graph belongs to the task of the memory its launches use: that memory
// is bound to one GPU before the capture begins (binding allocates and copies, which a capture
// forbids), the capture runs on that GPU's stream, and every launch of the instantiated graph
// runs there. The graph holds no reservation of its own: its memory's task does, until the
// program frees that memory.
#include "runtime.h"

namespace mgb::runtime {

cudaError_t Runtime::StreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  if (!session_.Managed()) return api_.StreamBeginCapture(stream, mode);
  ThreadState &state = Thread();
  uint64_t task = CurrentTaskId();
  if (task == 0 && DeviceOfTask(state.last_prepared) >= 0) task = state.last_prepared;
  if (task == 0 && Eager()) {
    std::lock_guard lock(mu_);
    task = process_task_;
  }
  std::vector<uintptr_t> unbound;
  {
    std::lock_guard lock(mu_);
    for (const auto &[base, object] : objects_) {
      if (object->state == ObjectState::kUnbound && !object->freed &&
          object->owner == std::this_thread::get_id()) {
        unbound.push_back(base);
      }
    }
  }
  if (!unbound.empty()) {
    cudaError_t bound = Bind(unbound, LaunchShape{}, "cudaStreamBeginCapture", task);
    if (bound != cudaSuccess) return bound;
    if (task == 0) task = state.last_prepared;
  }
  int device = DeviceOfTask(task);
  if (device < 0) device = CurrentDevice();
  if (device >= 0 && device != CurrentDevice()) api_.SetDevice(device);
  cudaError_t error = api_.StreamBeginCapture(StreamOn(stream, device), mode);
  if (error == cudaSuccess) {
    ++state.captures;
    state.capture_device = device;
  }
  return error;
}

cudaError_t Runtime::StreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) {
  if (!session_.Managed()) return api_.StreamEndCapture(stream, graph);
  ThreadState &state = Thread();
  int device = state.captures > 0 ? state.capture_device : CurrentDevice();
  cudaError_t error = api_.StreamEndCapture(StreamOn(stream, device), graph);
  if (state.captures > 0) --state.captures;
  if (error == cudaSuccess && graph != nullptr && *graph != nullptr) {
    std::lock_guard lock(mu_);
    graph_devices_[*graph] = device;
  }
  return error;
}

cudaError_t Runtime::GraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                      unsigned long long flags) {
  if (!session_.Managed()) return api_.GraphInstantiate(exec, graph, flags);
  int device = -1;
  {
    std::lock_guard lock(mu_);
    if (auto it = graph_devices_.find(graph); it != graph_devices_.end()) device = it->second;
  }
  if (device < 0) device = CurrentDevice();
  if (device >= 0 && device != CurrentDevice()) api_.SetDevice(device);
  cudaError_t error = api_.GraphInstantiate(exec, graph, flags);
  if (error == cudaSuccess && exec != nullptr) {
    std::lock_guard lock(mu_);
    exec_devices_[*exec] = device;
  }
  return error;
}

cudaError_t Runtime::GraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (!session_.Managed()) return api_.GraphLaunch(exec, stream);
  int device = -1;
  {
    std::lock_guard lock(mu_);
    if (auto it = exec_devices_.find(exec); it != exec_devices_.end()) device = it->second;
  }
  if (device < 0) device = CurrentDevice();
  if (device >= 0 && device != CurrentDevice()) api_.SetDevice(device);
  return api_.GraphLaunch(exec, StreamOn(stream, device));
}

}  // namespace mgb::runtime
