// Warp-size hazards: each 32 that means "a warp", and none that does not.
__device__ float warp_sum(float v) {
  // DIAG: MU2023
  for (int offset = 16; offset > 0; offset >>= 1) {
    // DIAG: MU2020:note
    v += __shfl_xor_sync(0xFFFFFFFF, v, offset);
  }
  // DIAG: MU2020, MU2022
  v = __shfl_sync(~0u, v, 0, 32);
  // DIAG: MU2023
  v += __shfl_down_sync(__activemask(), v, 16);
  return v;
}

__global__ void kernel(const float* x, float* out, int n) {
  __shared__ float per_warp[32];
  int tid = threadIdx.x;
  // DIAG: MU2021
  int lane = tid % 32;
  // DIAG: MU2021
  int warp = tid / 32;
  // DIAG: MU2021
  int lane2 = tid & (32 - 1);
  // DIAG: MU2020
  unsigned full_mask = 0xffffffff;
  float v = x[blockIdx.x * blockDim.x + tid];
  // DIAG: MU2020:note, MU2041
  unsigned vote = __ballot_sync(~0, v > 0.0f);
  // DIAG: MU2024
  if (tid < 32) {
    v = per_warp[lane];
  }
  // DIAG: MU2025
  if (warpSize == 32) {
    out[warp] = v + vote;
  }
  __syncwarp(full_mask);
  // Negative: a full 32-bit constant named as a mask but only computed with is a byte mask
  // (nvshmem's proxy_device.cuh), not a lane mask.
  const unsigned long long mask_4_bytes = 0x00000000ffffffff;
  out[1] = (float)(n & mask_4_bytes);
  // Negatives: sizes, not warps.
  int chunks = n / 32;
  int rest = n % 32;
  int odd = n & (32 - 1);
  float local[32];
  local[0] = chunks + rest + odd + lane2;
  for (int i = 0; i < 32; ++i) {
    local[i] = 0.0f;
  }
  for (int o = warpSize / 2; o > 0; o /= 2) {
    v += __shfl_xor_sync(__activemask(), v, o, warpSize);
  }
  out[0] = local[0] + v;
}

// A ballot counted or compared as 32 bits: one finding (MU2041) for the function, each site listed.
__device__ int votes(float v, int* all) {
  // DIAG: MU2041
  int n = __popc(__ballot_sync(__activemask(), v > 0.0f));
  unsigned long long wide = __ballot_sync(__activemask(), v < 0.0f);
  // DIAG: MU2041
  if (__ballot_sync(__activemask(), v != 0.0f) == 0xffffffff) {
    *all = 1;
  }
  // Negative: a mask taken while every lane is active and passed on, never read as bits.
  unsigned int active = __activemask();
  v = __shfl_sync(active, v, 0);
  return n + (int)(wide & 1) + (int)v;
}

// Negative: host code with 32 everywhere.
void host_side(int n) {
  float buf[32];
  int blocks = n / 32;
  unsigned mask = 0xffffffff;
  buf[blocks & 31] = mask >> 5;
}

// Negatives (llama.cpp's mmq-load-tiles.cuh): a word of quantized bits shifted by a thread's
// column, and a value loaded at a thread's index, are data, not a lane or warp number.
__global__ void unpack_bits(const int* words, int* out) {
  const int col = threadIdx.x % 4;
  const int qh = words[blockIdx.x] >> (4 * col);
  const int loaded = words[threadIdx.x];
  out[threadIdx.x] = ((qh >> 5) & 0x10) | (loaded & 31);
}

// Negatives (GPTQModel's VPTQ kernel): a bit position in packed 32-bit words, however a thread
// came to it, is split into its word and its bit; that is no lane or warp number.
__global__ void unpack_indices(const unsigned* indices, int* out, int bits_per_index) {
  const int bit = threadIdx.x * bits_per_index;
  const int word = bit >> 5;
  const int shift = bit & 31;
  const int bitPos = threadIdx.x * 3;
  out[threadIdx.x] = (indices[word] >> shift) + (bitPos / 32);
}

// ...but a lane taken from a thread's index next to them still is.
__global__ void lane_beside_bits(int* out) {
  const int bit = threadIdx.x * 3;
  // DIAG: MU2021
  out[bit >> 5] = threadIdx.x & 31;
}
