// Shared-memory patterns the race check must accept (barriers, warp collectives between lanes of a
// warp, atomics) and one it must report: a race in dynamic shared memory (`racecheck.cu dynamic`).
#include <cstdio>
#include <cstring>

__global__ void clean(const int* in, int* hist, int* sums) {
    __shared__ int bins[16];
    __shared__ int partial[256];
    extern __shared__ int scratch[];
    int t = threadIdx.x;
    if (t < 16) bins[t] = 0;
    __syncthreads();
    atomicAdd(&bins[in[blockIdx.x * blockDim.x + t] % 16], 1);  // atomics do not race
    partial[t] = in[blockIdx.x * blockDim.x + t];
    scratch[t] = 2 * partial[t];  // its own element: no race
    __syncthreads();
    for (int s = blockDim.x / 2; s >= warpSize && s > 0; s /= 2) {  // tree reduction with barriers
        if (t < s) partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t < warpSize) {  // the last warp: __syncwarp() between steps, as Volta requires
        int v = partial[t];
        for (int s = warpSize / 2; s > 0; s /= 2) {
            if (t < s && t + s < (int)blockDim.x) v += partial[t + s];
            __syncwarp();
            partial[t] = v;
            __syncwarp();
        }
    }
    __syncthreads();
    if (t < 16) hist[blockIdx.x * 16 + t] = bins[t];
    if (t == 0) sums[blockIdx.x] = partial[0] + scratch[1] - 2 * partial[1] * 0;
}

__global__ void dynamic_race(int* out) {
    extern __shared__ int buffer[];
    int t = threadIdx.x;
    buffer[t] = t;
    out[t] = buffer[(t + 1) % blockDim.x];  // the neighbour's write, no barrier
}

int main(int argc, char** argv) {
    const int blocks = 3, threads = 256, n = blocks * threads;
    int *in, *hist, *sums;
    cudaMallocManaged(&in, n * sizeof(int));
    cudaMallocManaged(&hist, blocks * 16 * sizeof(int));
    cudaMallocManaged(&sums, blocks * sizeof(int));
    for (int i = 0; i < n; ++i) in[i] = (i * 37) % 101;
    if (argc > 1 && std::strcmp(argv[1], "dynamic") == 0) {
        dynamic_race<<<1, 64, 64 * sizeof(int)>>>(hist);
        cudaDeviceSynchronize();
        std::printf("no race reported\n");
        return 0;
    }
    clean<<<blocks, threads, threads * sizeof(int)>>>(in, hist, sums);
    cudaDeviceSynchronize();
    int bad = 0;
    for (int b = 0; b < blocks; ++b) {
        int want[16] = {0}, sum = 0;
        for (int t = 0; t < threads; ++t) { ++want[in[b * threads + t] % 16]; sum += in[b * threads + t]; }
        for (int k = 0; k < 16; ++k) bad += hist[b * 16 + k] != want[k];
        int expect = sum + 2 * in[b * threads + 1];
        if (sums[b] != expect) { std::printf("block %d: sum %d, want %d\n", b, sums[b], expect); ++bad; }
    }
    std::printf(bad ? "FAIL\n" : "PASS\n");
    return bad != 0;
}
