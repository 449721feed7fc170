// warp32_only: the same per-block sum and count as warp_agnostic, written the way much CUDA code
// is: a warp is assumed to be 32 lanes. Correct on 32-lane warps, wrong on 128-lane warps.
// Every line whose meaning is wrong at 128 lanes carries a trailing marker (see corpora/README.md); the
// `partial[32]` arrays are not marked: 32 slots are still enough when warps are wider.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t err_ = (call);                                                     \
        if (err_ != cudaSuccess) {                                                     \
            std::printf("FAIL %s: %s\n", #call, cudaGetErrorString(err_));             \
            std::exit(1);                                                              \
        }                                                                              \
    } while (0)
#define PROGRAM "warp32_only"

__global__ void block_stats(const float* x, int n, float threshold, float* sums, int* counts)
{
    __shared__ float partial_sum[32];
    __shared__ int partial_count[32];
    const int lane = threadIdx.x & 31;  // WARP32
    const int warp = threadIdx.x >> 5;  // WARP32

    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    const unsigned int above = __ballot_sync(0xffffffff, i < n && v > threshold);  // WARP32
    for (int offset = 16; offset > 0; offset >>= 1) {  // WARP32
        v += __shfl_down_sync(0xffffffff, v, offset);  // WARP32
    }
    if (lane == 0) {
        partial_sum[warp] = v;
        partial_count[warp] = __popc(above);  // WARP32
    }
    __syncthreads();
    if (threadIdx.x < 32) {  // WARP32
        const bool used = lane < blockDim.x / 32;  // WARP32
        v = used ? partial_sum[lane] : 0.0f;
        int c = used ? partial_count[lane] : 0;
        for (int offset = 16; offset > 0; offset >>= 1) {  // WARP32
            v += __shfl_down_sync(0xffffffff, v, offset);  // WARP32
            c += __shfl_down_sync(0xffffffff, c, offset);  // WARP32
        }
        if (lane == 0) {
            sums[blockIdx.x] = v;
            counts[blockIdx.x] = c;
        }
    }
}

int main()
{
    const int threads = 256;
    const int blocks = 96;
    const int n = blocks * threads - 37;  // the last block is partly empty
    const float threshold = 1.0f;
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i) {
        const unsigned int h = static_cast<unsigned int>(i) * 2654435761u;
        x[i] = static_cast<float>(static_cast<int>((h >> 13) % 64u) - 32) / 8.0f;  // exact in float
    }

    float* d_x = nullptr;
    float* d_sums = nullptr;
    int* d_counts = nullptr;
    CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CHECK(cudaMalloc(&d_sums, blocks * sizeof(float)));
    CHECK(cudaMalloc(&d_counts, blocks * sizeof(int)));
    CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    block_stats<<<blocks, threads>>>(d_x, n, threshold, d_sums, d_counts);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());

    std::vector<float> sums(blocks);
    std::vector<int> counts(blocks);
    CHECK(cudaMemcpy(sums.data(), d_sums, blocks * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(counts.data(), d_counts, blocks * sizeof(int), cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int b = 0; b < blocks; ++b) {
        float want_sum = 0.0f;  // multiples of 1/8 with small partial sums: exact in any order
        int want_count = 0;
        for (int i = b * threads; i < (b + 1) * threads && i < n; ++i) {
            want_sum += x[i];
            want_count += x[i] > threshold ? 1 : 0;
        }
        if (sums[b] != want_sum || counts[b] != want_count) {
            ++bad;
        }
    }
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_sums));
    CHECK(cudaFree(d_counts));
    std::printf("%s %s blocks=%d threads=%d bad_blocks=%d\n", bad == 0 ? "PASS" : "FAIL", PROGRAM, blocks,
                threads, bad);
    return bad == 0 ? 0 : 1;
}
