// RUN: rm -rf %t && %mgb-rewrite --root %S -o %t/first %s -- 2> %t.stderr
// RUN: FileCheck %s --check-prefix=CHECK-MESSAGES --input-file=%t.stderr
// RUN: %strip-checks %t/first/untwinned_alloc.cu | FileCheck %s
// RUN: %golden %t %s
// Device memory taken through entry points libmgb has no twin for (a CUDA array behind a texture
// object, as in cuda-samples simpleTexture; cudaMalloc3D; stream-ordered cudaMallocAsync): the
// task around them stays as it is, and each such call is reported on stderr, never silently left
// out of the reservation.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void sampleTexture(float *out, int w, int h, cudaTextureObject_t tex) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h)
    out[y * w + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
}

__global__ void addPlanes(cudaPitchedPtr vol, float *acc, int w, int h, int d) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= w * h)
    return;
  float sum = 0.0f;
  for (int z = 0; z < d; ++z)
    sum += ((float *)((char *)vol.ptr + (size_t)z * vol.pitch * h))[x];
  acc[x] = sum;
}

int main() {
  const int w = 64, h = 32, d = 4;
  float host[w * h];
  for (int i = 0; i < w * h; ++i)
    host[i] = (float)(i % 13);

  float *out;
  // CHECK: mgb_task mgb_task_1 = mgb_task_begin((size_t)(w * h * sizeof(float)),
  cudaMalloc((void **)&out, w * h * sizeof(float));
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t array;
  // CHECK: {{^}}  cudaMallocArray(&array, &desc, w, h);
  // CHECK-MESSAGES: untwinned_alloc.cu:[[@LINE+1]]:{{[0-9]+}}: warning: cudaMallocArray has no mgb twin
  cudaMallocArray(&array, &desc, w, h);
  cudaMemcpy2DToArray(array, 0, 0, host, w * sizeof(float), w * sizeof(float), h,
                      cudaMemcpyHostToDevice);
  cudaResourceDesc res;
  memset(&res, 0, sizeof(res));
  res.resType = cudaResourceTypeArray;
  res.res.array.array = array;
  cudaTextureDesc texDesc;
  memset(&texDesc, 0, sizeof(texDesc));
  texDesc.readMode = cudaReadModeElementType;
  cudaTextureObject_t tex;
  cudaCreateTextureObject(&tex, &res, &texDesc, NULL);
  dim3 block(16, 16);
  dim3 grid(w / 16, h / 16);
  sampleTexture<<<grid, block>>>(out, w, h, tex);
  float back[w * h];
  // CHECK: mgb_cudaMemcpy(back, out, w * h * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(back, out, w * h * sizeof(float), cudaMemcpyDeviceToHost);
  cudaDestroyTextureObject(tex);
  cudaFreeArray(array);
  cudaFree(out);
  // CHECK: mgb_task_end(mgb_task_1);

  cudaPitchedPtr vol;
  // CHECK: {{^}}  cudaMalloc3D(&vol, make_cudaExtent(w * sizeof(float), h, d));
  // CHECK-MESSAGES: untwinned_alloc.cu:[[@LINE+1]]:{{[0-9]+}}: warning: cudaMalloc3D has no mgb twin
  cudaMalloc3D(&vol, make_cudaExtent(w * sizeof(float), h, d));
  cudaMemset3D(vol, 0, make_cudaExtent(w * sizeof(float), h, d));
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  float *acc;
  // CHECK: {{^}}  cudaMallocAsync((void **)&acc, w * h * sizeof(float), mgb_real_stream(stream));
  // CHECK-MESSAGES: untwinned_alloc.cu:[[@LINE+1]]:{{[0-9]+}}: warning: cudaMallocAsync has no mgb twin
  cudaMallocAsync((void **)&acc, w * h * sizeof(float), stream);
  addPlanes<<<(w * h + 127) / 128, 128, 0, stream>>>(vol, acc, w, h, d);
  float sums[w * h];
  cudaMemcpyAsync(sums, acc, w * h * sizeof(float), cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  // CHECK: {{^}}  cudaFreeAsync(acc, mgb_real_stream(stream));
  cudaFreeAsync(acc, stream);
  cudaStreamDestroy(stream);
  cudaFree(vol.ptr);

  int bad = 0;
  for (int i = 0; i < w * h; ++i)
    bad += back[i] != host[i] || sums[i] != 0.0f;
  printf("%s\n", bad ? "FAIL" : "PASS");
  return bad != 0;
}
