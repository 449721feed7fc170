// Emulator gaps met on real programs: coalesced_threads() (warp-aggregated atomics, a reduce over
// the group) and `typedef __align__(n) T Type;`.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>
namespace cg = cooperative_groups;

typedef __align__(8) float Pair[2];
typedef __align__(16) struct { float x, y, z, w; } Quad;
struct __align__(16) Boxed { float v; };

// Each thread whose value is odd takes a slot in `out`; one atomic per group, as in the CUDA
// programming guide's warp-aggregated increment.
__device__ int aggregated_slot(int* counter) {
    cg::coalesced_group g = cg::coalesced_threads();
    int base = 0;
    if (g.thread_rank() == 0) base = atomicAdd(counter, (int)g.size());
    return g.shfl(base, 0) + (int)g.thread_rank();
}

__global__ void compact(const int* in, int* out, int* counter, int* sizes, int* sums, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (in[i] % 2) {
        out[aggregated_slot(counter)] = in[i];
        cg::coalesced_group g = cg::coalesced_threads();
        int total = cg::reduce(g, in[i], cg::plus<int>());
        unsigned bits = g.ballot(in[i] % 3 == 0);
        if (g.thread_rank() == 0) {
            sizes[i / warpSize] = g.size();
            sums[i / warpSize] = total + (int)(__popc(bits) << 20);
        }
    }
}

int main() {
    const int n = 200;
    int *in, *out, *counter, *sizes, *sums;
    cudaMallocManaged(&in, n * sizeof(int));
    cudaMallocManaged(&out, n * sizeof(int));
    cudaMallocManaged(&counter, sizeof(int));
    cudaMallocManaged(&sizes, n * sizeof(int));
    cudaMallocManaged(&sums, n * sizeof(int));
    *counter = 0;
    for (int i = 0; i < n; ++i) { in[i] = (i * 7 + 3) % 11; sizes[i] = sums[i] = 0; }
    compact<<<(n + 127) / 128, 128>>>(in, out, counter, sizes, sums, n);
    cudaDeviceSynchronize();
    int odd = 0, bad = 0;
    long long want_sum = 0, got_sum = 0;
    for (int i = 0; i < n; ++i) if (in[i] % 2) { ++odd; want_sum += in[i]; }
    for (int i = 0; i < *counter; ++i) got_sum += out[i];
    if (*counter != odd || got_sum != want_sum) { std::printf("compact: %d of %d, sum %lld of %lld\n", *counter, odd, got_sum, want_sum); ++bad; }
    for (int w = 0; w * warpSize < n; ++w) {
        int count = 0, sum = 0, threes = 0;
        for (int i = w * warpSize; i < n && i < (w + 1) * warpSize; ++i)
            if (in[i] % 2) { ++count; sum += in[i]; threes += in[i] % 3 == 0; }
        if (count && (sizes[w] != count || sums[w] != sum + (threes << 20))) {
            std::printf("warp %d: size %d (want %d) sum %d (want %d)\n", w, sizes[w], count, sums[w], sum + (threes << 20));
            ++bad;
        }
    }
    if (alignof(Pair) != 8 || alignof(Quad) != 16 || alignof(Boxed) != 16) { std::printf("alignment\n"); ++bad; }
    std::printf("groups of %d, %d odd values\n", sizes[0], odd);
    std::printf(bad ? "FAIL\n" : "PASS\n");
    return bad != 0;
}
