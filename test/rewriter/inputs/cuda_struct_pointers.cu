// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr --allow-empty
// RUN: %strip-checks %t/first/cuda_struct_pointers.cu | FileCheck %s
// RUN: %golden %t %s
// CHECK-MESSAGES-NOT: warning
// Device pointers handed to CUDA inside CUDA's own structs: a texture object over linear memory
// (cudaResourceDesc::res.linear.devPtr) and a 3D copy (make_cudaPitchedPtr into a
// cudaMemcpy3DParms). CUDA reads them where libmgb does not look, so each is made real where it
// is stored or built: a stand-in must never reach CUDA.
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

__global__ void read_texture(cudaTextureObject_t tex, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = 2.f * tex1Dfetch<float>(tex, i);
}

static float *upload(const std::vector<float> &h) {
  float *d;
  CHECK(cudaMalloc((void **)&d, h.size() * sizeof(float)));
  CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  return d;
}

// CHECK-LABEL: static cudaTextureObject_t texture_over(
static cudaTextureObject_t texture_over(float *d, int n) {
  cudaResourceDesc res;
  memset(&res, 0, sizeof(res));
  res.resType = cudaResourceTypeLinear;
  // CHECK: res.res.linear.devPtr = mgb_arg(d);
  res.res.linear.devPtr = d;
  res.res.linear.desc = cudaCreateChannelDesc<float>();
  res.res.linear.sizeInBytes = n * sizeof(float);
  cudaTextureDesc desc;
  memset(&desc, 0, sizeof(desc));
  desc.readMode = cudaReadModeElementType;
  cudaTextureObject_t tex;
  CHECK(cudaCreateTextureObject(&tex, &res, &desc, nullptr));
  return tex;
}

// CHECK-LABEL: static void copy_3d(
static void copy_3d(float *dst, const float *src, int nx, int ny, int nz) {
  cudaMemcpy3DParms p;
  memset(&p, 0, sizeof(p));
  // CHECK: mgb_prepare(mgb_dim(1), mgb_dim(1), nullptr, "cuda_struct_pointers.cu:{{[0-9]+}}", (void *)src);
  // CHECK-NEXT: p.srcPtr = make_cudaPitchedPtr(mgb_arg((void *)src), nx * sizeof(float), nx, ny);
  p.srcPtr = make_cudaPitchedPtr((void *)src, nx * sizeof(float), nx, ny);
  p.dstPtr = make_cudaPitchedPtr(dst, nx * sizeof(float), nx, ny);
  p.extent = make_cudaExtent(nx * sizeof(float), ny, nz);
  p.kind = cudaMemcpyDeviceToDevice;
  CHECK(cudaMemcpy3D(&p));
}

int main() {
  const int nx = 16, ny = 8, nz = 4, n = nx * ny * nz;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i)
    h[i] = (float)(i % 17);
  float *in = upload(h);
  float *copy = upload(std::vector<float>(n, 0.f));
  copy_3d(copy, in, nx, ny, nz);
  cudaTextureObject_t tex = texture_over(copy, n);
  float *out = upload(std::vector<float>(n, 0.f));
  read_texture<<<(n + 127) / 128, 128>>>(tex, out, n);
  CHECK(cudaGetLastError());
  std::vector<float> result(n);
  CHECK(cudaMemcpy(result.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; ++i)
    wrong += result[i] != 2.f * (float)(i % 17);
  CHECK(cudaDestroyTextureObject(tex));
  CHECK(cudaFree(in));
  CHECK(cudaFree(copy));
  CHECK(cudaFree(out));
  printf("%d of %d wrong\n%s\n", wrong, n, wrong == 0 ? "PASS" : "FAIL");
  return wrong == 0 ? 0 : 1;
}
