// A warp reduction that loops over warpSize but passes the 32-bit full mask: musify warns (MU2020),
// and on the emulator (a full mask means the whole warp) the port still passes at 128 lanes.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void warp_sums(const int* in, int* out) {
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  if (threadIdx.x % warpSize == 0) atomicAdd(out, v);
}

int main() {
  const int n = 1024;
  static int h[n];
  long long want = 0;
  for (int i = 0; i < n; ++i) { h[i] = i % 13; want += h[i]; }
  int *d_in, *d_out, got = 0;
  cudaMalloc(&d_in, sizeof h);
  cudaMalloc(&d_out, sizeof(int));
  cudaMemcpy(d_in, h, sizeof h, cudaMemcpyHostToDevice);
  cudaMemcpy(d_out, &got, sizeof(int), cudaMemcpyHostToDevice);
  warp_sums<<<n / 256, 256>>>(d_in, d_out);
  cudaMemcpy(&got, d_out, sizeof(int), cudaMemcpyDeviceToHost);
  std::printf("%s full_mask sum=%d want=%lld\n", got == want ? "PASS" : "FAIL", got, want);
  cudaFree(d_in);
  cudaFree(d_out);
  return got == want ? 0 : 1;
}
