// out = a + 2 b on the device, checked on the host (written for musify's verify tests).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void add(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + 2.0f * b[i];
}

int main() {
  const int n = 2048;
  static float a[n], b[n], out[n];
  for (int i = 0; i < n; ++i) { a[i] = i * 0.5f; b[i] = (i % 7) * 0.25f; }
  float *da, *db, *dout;
  cudaMalloc(&da, sizeof a);
  cudaMalloc(&db, sizeof b);
  cudaMalloc(&dout, sizeof out);
  cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
  add<<<n / 256, 256>>>(da, db, dout, n);
  cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost);
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += out[i];
  std::printf("info: elapsed time 0.%d ms\n", n % 10);
  std::printf("sum %.3f\n", sum);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dout);
  return 0;
}
