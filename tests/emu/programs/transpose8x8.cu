// An 8x8 transpose in shared memory, written as pre-Volta samples (the DCT8x8 sample's row and
// column passes) wrote it: each of 8 threads writes a row of the tile and then reads a column,
// relying on the 8 threads running in lock-step within a warp, with no barrier between. On the
// emulator (threads run one after the other between barriers) and on any GPU with independent
// thread scheduling this reads columns before they are written. `transpose8x8 sync` adds the
// __syncwarp() that makes it correct.
#include <cstdio>
#include <cstring>

__global__ void transpose_lockstep(const float* in, float* out) {
    __shared__ float tile[8][8 + 1];
    const float* src = in + blockIdx.x * 64;
    float* dst = out + blockIdx.x * 64;
    int r = threadIdx.x;
    for (int c = 0; c < 8; ++c) tile[r][c] = src[r * 8 + c];
    for (int c = 0; c < 8; ++c) dst[r * 8 + c] = tile[c][r];
}

__global__ void transpose_synced(const float* in, float* out) {
    __shared__ float tile[8][8 + 1];
    const float* src = in + blockIdx.x * 64;
    float* dst = out + blockIdx.x * 64;
    int r = threadIdx.x;
    for (int c = 0; c < 8; ++c) tile[r][c] = src[r * 8 + c];
    __syncwarp(0xffu);
    for (int c = 0; c < 8; ++c) dst[r * 8 + c] = tile[c][r];
}

int main(int argc, char** argv) {
    bool sync = argc > 1 && std::strcmp(argv[1], "sync") == 0;
    const int blocks = 4, n = blocks * 64;
    float *in, *out;
    cudaMallocManaged(&in, n * sizeof(float));
    cudaMallocManaged(&out, n * sizeof(float));
    for (int i = 0; i < n; ++i) in[i] = float(i);
    if (sync)
        transpose_synced<<<blocks, 8>>>(in, out);
    else
        transpose_lockstep<<<blocks, 8>>>(in, out);
    cudaDeviceSynchronize();
    int wrong = 0;
    for (int b = 0; b < blocks; ++b)
        for (int r = 0; r < 8; ++r)
            for (int c = 0; c < 8; ++c) wrong += out[b * 64 + r * 8 + c] != in[b * 64 + c * 8 + r];
    std::printf("%d of %d elements wrong\n", wrong, n);
    std::printf(wrong ? "FAIL\n" : "PASS\n");
    return wrong != 0;
}
