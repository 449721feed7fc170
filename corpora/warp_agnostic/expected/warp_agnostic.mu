// warp_agnostic: per-block sum of floats and count of elements above a threshold, reduced with
// warp shuffles. Nothing assumes a warp width: lanes, warp indices, shuffle offsets and the
// number of per-warp partials all come from warpSize, so the kernel is right at 32 and at 128
// lanes. Compare warp32_only, which computes the same thing assuming 32 lanes.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

#define CHECK(call) CUDA_CHECK(call)
#define PROGRAM "warp_agnostic"

// Tree reduction within one warp; lane 0 ends up with the warp's total.
template <typename T>
__device__ T warp_sum(T v, unsigned int mask)
{
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
        v += __shfl_down_sync(mask, v, offset);
    }
    return v;
}

__global__ void block_stats(const float* x, int n, float threshold, float* sums, int* counts)
{
    // Taken before any branch, while every lane of the warp is active: the whole warp.
    const unsigned int mask = __activemask();
    // One slot per warp: a block has at most 1024 threads and a warp at least 32 lanes.
    __shared__ float partial_sum[32];
    __shared__ int partial_count[32];
    const int lane = threadIdx.x % warpSize;
    const int warp = threadIdx.x / warpSize;
    const int warps = (blockDim.x + warpSize - 1) / warpSize;

    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    int c = (i < n && v > threshold) ? 1 : 0;
    v = warp_sum(v, mask);
    c = warp_sum(c, mask);
    if (lane == 0) {
        partial_sum[warp] = v;
        partial_count[warp] = c;
    }
    __syncthreads();
    if (warp == 0) {
        v = lane < warps ? partial_sum[lane] : 0.0f;
        c = lane < warps ? partial_count[lane] : 0;
        v = warp_sum(v, mask);
        c = warp_sum(c, mask);
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
    CHECK(musaMalloc(&d_x, n * sizeof(float)));
    CHECK(musaMalloc(&d_sums, blocks * sizeof(float)));
    CHECK(musaMalloc(&d_counts, blocks * sizeof(int)));
    CHECK(musaMemcpy(d_x, x.data(), n * sizeof(float), musaMemcpyHostToDevice));
    block_stats<<<blocks, threads>>>(d_x, n, threshold, d_sums, d_counts);
    CHECK(musaGetLastError());
    CHECK(musaDeviceSynchronize());

    std::vector<float> sums(blocks);
    std::vector<int> counts(blocks);
    CHECK(musaMemcpy(sums.data(), d_sums, blocks * sizeof(float), musaMemcpyDeviceToHost));
    CHECK(musaMemcpy(counts.data(), d_counts, blocks * sizeof(int), musaMemcpyDeviceToHost));
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
    CHECK(musaFree(d_x));
    CHECK(musaFree(d_sums));
    CHECK(musaFree(d_counts));
    std::printf("%s %s blocks=%d threads=%d bad_blocks=%d\n", bad == 0 ? "PASS" : "FAIL", PROGRAM, blocks,
                threads, bad);
    return bad == 0 ? 0 : 1;
}
