// Applies MODE to an index range; its flags live only in compile_commands.json.
#include <cstdio>
#include <cuda_runtime.h>
#include "modes.cuh"

__global__ void mode_kernel(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = apply_mode(i);
}

int main() {
  const int n = 4096;
  int* d = nullptr;
  if (cudaMalloc(&d, n * sizeof(int)) != cudaSuccess) return 2;
  mode_kernel<<<n / 128, 128>>>(d, n);
  static int h[4096];
  if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
  long long sum = 0;
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    sum += h[i];
    bad += h[i] != i * MODE + (i & 1);
  }
  std::printf("%s compdb sum=%lld mismatches=%d\n", bad ? "FAIL" : "PASS", sum, bad);
  cudaFree(d);
  return bad ? 1 : 0;
}
