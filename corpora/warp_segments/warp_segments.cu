// warp_segments: sums of 32-element segments, reduced with width-32 shuffles. The 32 here is the
// segment's width, not the warp's: a shuffle with width 32 stays inside its 32-lane segment on any
// warp, so the kernel is right at 32 and at 128 lanes. musify cannot tell the two meanings of 32
// apart from the text and warns (shuffle width, lane arithmetic, a loop sized for 32 lanes);
// `musify verify` runs the port at 128 lanes and clears those warnings. Compare warp32_only, where
// the same kind of code really is wrong at 128 lanes.
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

constexpr int SEGMENT = 32;

// Butterfly sum over one 32-lane segment: every lane of the segment ends with the segment's sum.
__device__ int segment_sum(int v)
{
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_xor_sync(0xffffffff, v, offset, 32);
    }
    return v;
}

__global__ void segment_sums(const int* x, int n, int* sums, int* maxima)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int v = i < n ? x[i] : 0;
    const int total = segment_sum(v);
    // the largest element of the segment, with the same width-32 shuffles
    int m = v;
    for (int offset = 16; offset > 0; offset /= 2) {
        m = max(m, __shfl_xor_sync(0xffffffff, m, offset, 32));
    }
    if ((threadIdx.x & 31) == 0 && i < n) {
        sums[i / SEGMENT] = total;
        maxima[i / SEGMENT] = m;
    }
}

int main()
{
    const int n = 1 << 14;  // a multiple of the segment and of the block
    const int segments = n / SEGMENT;
    std::vector<int> h(n);
    for (int i = 0; i < n; ++i) {
        h[i] = (i * 7919) % 1000 - 500;
    }
    int *d_x = nullptr, *d_sums = nullptr, *d_max = nullptr;
    CHECK(cudaMalloc(&d_x, n * sizeof(int)));
    CHECK(cudaMalloc(&d_sums, segments * sizeof(int)));
    CHECK(cudaMalloc(&d_max, segments * sizeof(int)));
    CHECK(cudaMemcpy(d_x, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    segment_sums<<<n / 256, 256>>>(d_x, n, d_sums, d_max);
    CHECK(cudaGetLastError());
    std::vector<int> sums(segments), maxima(segments);
    CHECK(cudaMemcpy(sums.data(), d_sums, segments * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(maxima.data(), d_max, segments * sizeof(int), cudaMemcpyDeviceToHost));

    int wrong = 0;
    long long checksum = 0;
    for (int s = 0; s < segments; ++s) {
        int want_sum = 0, want_max = h[s * SEGMENT];
        for (int k = 0; k < SEGMENT; ++k) {
            want_sum += h[s * SEGMENT + k];
            want_max = h[s * SEGMENT + k] > want_max ? h[s * SEGMENT + k] : want_max;
        }
        wrong += (sums[s] != want_sum) + (maxima[s] != want_max);
        checksum += (long long)sums[s] * (s + 1) + maxima[s];
    }
    std::printf("segments %d checksum %lld first sum %d max %d\n", segments, checksum, sums[0], maxima[0]);
    std::printf("%s warp_segments: %d wrong\n", wrong == 0 ? "PASS" : "FAIL", wrong);
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_sums));
    CHECK(cudaFree(d_max));
    return wrong == 0 ? 0 : 1;
}
