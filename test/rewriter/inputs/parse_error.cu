// Does not compile: mgb-rewrite must print clang's diagnostic, exit non-zero and write nothing.
__global__ void k(float *x) { x[0] = 1; }
int main() {
  float *d;
  cudaMalloc(&d, 4);
  k<<<1, 1>>>(d, undeclared_name);
}
