// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s --
// RUN: %strip-checks %t/first/lazy_addresses.cu | FileCheck %s
// RUN: %golden %t %s
// Issue 31: device pointers made by a helper (lazy: no task around them) and then used where
// libmgb sees nothing: kept in a host struct, copied inside that struct into device memory and
// read by the kernel from there, used as keys of a host map, hashed and subtracted. With
// stand-ins each of these saw an address that later changed; with addresses reserved through
// CUDA's virtual memory management the pointer the program holds is the real one throughout,
// and the output is the original's.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>

#include <cuda_runtime.h>

#define CHECK(call)                                                                            \
  do {                                                                                         \
    cudaError_t err_ = (call);                                                                 \
    if (err_ != cudaSuccess) {                                                                 \
      printf("%s(%d): %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));                    \
      exit(1);                                                                                 \
    }                                                                                          \
  } while (0)

struct Mesh {  // device pointers in a host struct, as programs keep them
  float *x;
  float *y;
  int n;
};

__global__ void axpy(const Mesh *mesh, float a) {  // reads the pointers from device memory
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < mesh->n) mesh->y[i] = a * mesh->x[i] + mesh->y[i];
}

// CHECK-LABEL: static Mesh make_mesh(
// CHECK-NOT: mgb_task_begin(
static Mesh make_mesh(int n) {
  Mesh mesh;
  mesh.n = n;
  CHECK(cudaMalloc((void **)&mesh.x, n * sizeof(float)));
  CHECK(cudaMalloc((void **)&mesh.y, n * sizeof(float)));
  float *h = (float *)malloc(n * sizeof(float));
  for (int i = 0; i < n; ++i) h[i] = (float)(i % 13);
  CHECK(cudaMemcpy(mesh.x, h, n * sizeof(float), cudaMemcpyHostToDevice));
  for (int i = 0; i < n; ++i) h[i] = 1.0f;
  CHECK(cudaMemcpy(mesh.y, h, n * sizeof(float), cudaMemcpyHostToDevice));
  free(h);
  return mesh;
}

static Mesh *to_device(const Mesh &mesh) {
  Mesh *d_mesh;
  CHECK(cudaMalloc((void **)&d_mesh, sizeof(Mesh)));
  CHECK(cudaMemcpy(d_mesh, &mesh, sizeof(Mesh), cudaMemcpyHostToDevice));
  return d_mesh;
}

int main() {
  const int n = 1 << 20;
  Mesh mesh = make_mesh(n);
  std::map<const void *, std::string> names;  // keyed by address, before any launch
  names[mesh.x] = "x";
  names[mesh.y] = "y";
  const size_t hash_before = std::hash<const void *>()(mesh.y);
  const Mesh kept = mesh;
  Mesh *d_mesh = to_device(mesh);

  axpy<<<(n + 255) / 256, 256>>>(d_mesh, 2.0f);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());

  float *h = (float *)malloc(n * sizeof(float));
  CHECK(cudaMemcpy(h, mesh.y, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += h[i];
  printf("sum %.1f\n", sum);
  printf("pointers unchanged: %s\n", kept.x == mesh.x && kept.y == mesh.y ? "yes" : "no");
  printf("map finds y: %s\n", names.count(mesh.y) && names[mesh.y] == "y" ? "yes" : "no");
  printf("hash unchanged: %s\n",
         std::hash<const void *>()(mesh.y) == hash_before ? "yes" : "no");
  cudaPointerAttributes attributes;
  CHECK(cudaPointerGetAttributes(&attributes, mesh.x + 5));
  printf("device memory: %s\n", attributes.type == cudaMemoryTypeDevice ? "yes" : "no");
  free(h);
  CHECK(cudaFree(d_mesh));
  CHECK(cudaFree(mesh.x));
  CHECK(cudaFree(mesh.y));
  return 0;
}
