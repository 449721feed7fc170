// Scales an array on the device and checks it against a host reference computed with OpenMP.
// Builds only the way its Makefile says: -I../common, -DSCALE=3 and -Xcompiler -fopenmp.
#include <cuda_runtime.h>
#include <omp.h>
#include <vector>
#include "scale.cuh"

__global__ void scale_kernel(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = scaled(in[i]);
}

int main() {
  const int n = 1 << 14;
  std::vector<float> in(n), out(n), want(n);
  for (int i = 0; i < n; ++i) in[i] = 0.25f * (i % 97);
  double checksum = 0.0;
#pragma omp parallel for reduction(+ : checksum)
  for (int i = 0; i < n; ++i) {
    want[i] = scaled(in[i]);
    checksum += want[i];
  }
  float *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, n * sizeof(float)));
  CHECK(cudaMalloc(&d_out, n * sizeof(float)));
  CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  scale_kernel<<<(n + 255) / 256, 256>>>(d_in, d_out, n);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != want[i];
  std::printf("info: openmp threads available %d\n", omp_get_max_threads() > 0 ? 1 : 0);
  std::printf("%s make_omp n=%d checksum=%.3f mismatches=%d\n", bad ? "FAIL" : "PASS", n, checksum, bad);
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  return bad ? 1 : 0;
}
