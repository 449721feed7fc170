// sync_count: block-wide votes with __syncthreads_count, __syncthreads_or and __syncthreads_and,
// in a kernel with two early returns that are both legal CUDA:
//  * surplus blocks of a rounded-up grid return before any barrier; the condition depends only
//    on blockIdx, so a block either reaches every barrier with all its threads or none;
//  * out-of-range threads return only after the last barrier.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

#define BLOCK 128

__global__ void block_votes(const int* x, int* mirrored, int n, int blocks_needed, int* evens, int* any_negative,
                            int* all_small)
{
    if (blockIdx.x >= blocks_needed) {
        return;  // the whole block leaves: no barrier is waiting for these threads
    }
    __shared__ int tile[BLOCK];
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    const bool in_range = i < n;
    const int v = in_range ? x[i] : 0;
    const int even_count = __syncthreads_count(in_range && v % 2 == 0);
    const int negative = __syncthreads_or(in_range && v < 0);
    const int small = __syncthreads_and(!in_range || (v > -1000 && v < 1000));
    tile[threadIdx.x] = v;
    __syncthreads();
    if (!in_range) {
        return;  // past the last barrier: the remaining threads need nothing from this one
    }
    const int valid = min(BLOCK, n - static_cast<int>(blockIdx.x) * BLOCK);
    mirrored[i] = tile[valid - 1 - threadIdx.x];
    if (threadIdx.x == 0) {
        evens[blockIdx.x] = even_count;
        any_negative[blockIdx.x] = negative != 0;
        all_small[blockIdx.x] = small != 0;
    }
}

int main()
{
    const int n = 40 * BLOCK + 77;
    const int blocks_needed = (n + BLOCK - 1) / BLOCK;
    const int blocks_launched = (blocks_needed + 7) / 8 * 8;  // rounded up: some blocks have no work
    std::vector<int> x(n);
    for (int i = 0; i < n; ++i) {
        const int b = i / BLOCK;
        // Block b: negatives only when b % 3 == 0, one big value when b % 5 == 0.
        x[i] = (b % 3 == 0 && i % 9 == 4) ? -(i % 50) - 1 : (i * 7) % 100;
        if (b % 5 == 0 && i % BLOCK == 17) x[i] = 5000;
    }
    int *d_x, *d_mirrored, *d_evens, *d_neg, *d_small;
    CUDA_CHECK(musaMalloc(&d_x, n * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_mirrored, n * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_evens, blocks_needed * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_neg, blocks_needed * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_small, blocks_needed * sizeof(int)));
    CUDA_CHECK(musaMemcpy(d_x, x.data(), n * sizeof(int), musaMemcpyHostToDevice));
    block_votes<<<blocks_launched, BLOCK>>>(d_x, d_mirrored, n, blocks_needed, d_evens, d_neg, d_small);
    CUDA_CHECK_KERNEL();

    std::vector<int> mirrored(n), evens(blocks_needed), neg(blocks_needed), small(blocks_needed);
    CUDA_CHECK(musaMemcpy(mirrored.data(), d_mirrored, n * sizeof(int), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(evens.data(), d_evens, blocks_needed * sizeof(int), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(neg.data(), d_neg, blocks_needed * sizeof(int), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(small.data(), d_small, blocks_needed * sizeof(int), musaMemcpyDeviceToHost));

    int bad = 0;
    for (int b = 0; b < blocks_needed; ++b) {
        const int lo = b * BLOCK;
        const int hi = lo + BLOCK < n ? lo + BLOCK : n;
        int want_evens = 0, want_neg = 0, want_small = 1;
        for (int i = lo; i < hi; ++i) {
            want_evens += x[i] % 2 == 0 ? 1 : 0;
            want_neg |= x[i] < 0 ? 1 : 0;
            want_small &= (x[i] > -1000 && x[i] < 1000) ? 1 : 0;
            bad += mirrored[i] != x[lo + (hi - 1 - i)] ? 1 : 0;
        }
        bad += evens[b] != want_evens ? 1 : 0;
        bad += neg[b] != want_neg ? 1 : 0;
        bad += small[b] != want_small ? 1 : 0;
    }
    CUDA_CHECK(musaFree(d_x));
    CUDA_CHECK(musaFree(d_mirrored));
    CUDA_CHECK(musaFree(d_evens));
    CUDA_CHECK(musaFree(d_neg));
    CUDA_CHECK(musaFree(d_small));
    std::printf("%s sync_count n=%d blocks=%d/%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, blocks_needed,
                blocks_launched, bad);
    return bad == 0 ? 0 : 1;
}
