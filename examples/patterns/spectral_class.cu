// Pattern: a solver class owning thrust::device_vector members, a cuFFT plan and extended
// __device__ lambdas; a kernel takes a complex factor by value; __constant__ scalars are written
// with the five-argument cudaMemcpyToSymbol; 2000 implicit diffusion steps. Written after a
// third-party simulation that, rewritten, exited 0 with physics stopped after 8 of 2000 steps
// (issue 31). The field is one Fourier mode, so each step's decay is known exactly: the program
// checks the amplitude after every 250 steps against (1 / (1 + dt k^2))^steps.
#include <cufft.h>
#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/transform.h>
#include <thrust/transform_reduce.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#define CUDA_CHECK(call)                                                                \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s(%d): %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                     \
    }                                                                                   \
  } while (0)
#define FFT_CHECK(call)                                                              \
  do {                                                                               \
    cufftResult r_ = (call);                                                         \
    if (r_ != CUFFT_SUCCESS) {                                                       \
      std::fprintf(stderr, "%s(%d): cuFFT error %d\n", __FILE__, __LINE__, int(r_)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

__constant__ double c_dt;
__constant__ int c_n;

// One implicit step in spectral space: u_k <- factor * u_k / (1 + dt k^2), where factor carries
// the inverse transform's 1/n.
__global__ void implicit_step(cufftDoubleComplex *spectrum, const double *k2,
                              cufftDoubleComplex factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= c_n) return;
  double damp = 1.0 / (1.0 + c_dt * k2[i]);
  cufftDoubleComplex u = spectrum[i];
  spectrum[i].x = damp * (factor.x * u.x - factor.y * u.y);
  spectrum[i].y = damp * (factor.x * u.y + factor.y * u.x);
}

class Diffusion {
 public:
  Diffusion(int n, int mode) : n_(n), field_(n), k2_(n) { Init(mode); }
  ~Diffusion() { cufftDestroy(plan_); }

  // (An extended __device__ lambda may not sit in a constructor.)
  void Init(int mode) {
    const int n = n_;
    const double two_pi = 6.283185307179586;
    thrust::counting_iterator<int> first(0);
    thrust::transform(first, first + n, field_.begin(), [=] __device__(int i) -> cufftDoubleComplex {
      cufftDoubleComplex v;
      v.x = cos(two_pi * mode * i / n);
      v.y = 0.0;
      return v;
    });
    thrust::transform(first, first + n, k2_.begin(), [=] __device__(int i) -> double {
      double k = two_pi * (i <= n / 2 ? i : i - n);
      return k * k;
    });
    FFT_CHECK(cufftPlan1d(&plan_, n, CUFFT_Z2Z, 1));
  }

  void Step() {
    cufftDoubleComplex *u = thrust::raw_pointer_cast(field_.data());
    FFT_CHECK(cufftExecZ2Z(plan_, u, u, CUFFT_FORWARD));
    cufftDoubleComplex scale;
    scale.x = 1.0 / n_;
    scale.y = 0.0;
    implicit_step<<<(n_ + 255) / 256, 256>>>(u, thrust::raw_pointer_cast(k2_.data()), scale);
    CUDA_CHECK(cudaGetLastError());
    FFT_CHECK(cufftExecZ2Z(plan_, u, u, CUFFT_INVERSE));
  }

  // The mode's amplitude: max |u|.
  double Amplitude() const {
    return thrust::transform_reduce(
        field_.begin(), field_.end(),
        [] __device__(const cufftDoubleComplex &v) -> double { return sqrt(v.x * v.x + v.y * v.y); },
        0.0,
        thrust::maximum<double>());
  }

 private:
  int n_;
  thrust::device_vector<cufftDoubleComplex> field_;
  thrust::device_vector<double> k2_;
  cufftHandle plan_;
};

int main() {
  const int n = 4096, mode = 3, steps = 2000;
  const double dt = 2e-6;
  CUDA_CHECK(cudaMemcpyToSymbol(c_dt, &dt, sizeof(double), 0, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpyToSymbol(c_n, &n, sizeof(int), 0, cudaMemcpyHostToDevice));
  Diffusion solver(n, mode);
  const double k = 6.283185307179586 * mode;
  int bad = 0;
  for (int s = 1; s <= steps; ++s) {
    solver.Step();
    if (s % 250 == 0) {
      double got = solver.Amplitude(), want = std::pow(1.0 / (1.0 + dt * k * k), s);
      bool ok = std::fabs(got - want) < 1e-9;
      bad += !ok;
      std::printf("step %d amplitude %.12f expected %.12f %s\n", s, got, want, ok ? "ok" : "WRONG");
    }
  }
  std::printf("%s\n", bad ? "FAIL" : "PASS");
  return bad ? 1 : 0;
}
