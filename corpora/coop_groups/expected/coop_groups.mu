// coop_groups: per-tile results through cooperative groups. A static tiled_partition<32> sums
// with shfl_down, counts multiples of three with ballot and sums again with cg::reduce; a
// dynamic tiled_partition(block, 16) synchronises a 16-thread group around shared memory.
// Tiles are groups of threads, not hardware warps, so none of this depends on the warp width.
#include <cstdio>
#include <vector>

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "cuda_check.muh"

namespace cg = cooperative_groups;

#define BLOCK 256

__global__ void tile_stats(const int* x, int n, int* shfl_sums, int* ballot_counts, int* reduce_sums,
                           int* sums16)
{
    cg::thread_block block = cg::this_thread_block();
    const int rank = static_cast<int>(block.thread_rank());
    const int i = static_cast<int>(blockIdx.x) * BLOCK + rank;
    const int v = i < n ? x[i] : 0;

    cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(block);
    int s = v;
    for (int offset = static_cast<int>(tile32.size()) / 2; offset > 0; offset /= 2) {
        s += tile32.shfl_down(s, offset);
    }
    const unsigned int threes = tile32.ballot(i < n && v % 3 == 0);
    const int r = cg::reduce(tile32, v, cg::plus<int>());
    tile32.sync();
    const int tile_id = i / 32;  // blocks are whole tiles, so this numbers tiles across the grid
    if (tile32.thread_rank() == 0) {
        shfl_sums[tile_id] = s;
        ballot_counts[tile_id] = __popc(threes);
        reduce_sums[tile_id] = r;
    }

    __shared__ int scratch[BLOCK];
    cg::thread_group tile16 = cg::tiled_partition(block, 16);
    scratch[rank] = v;
    tile16.sync();  // the 16 values of this group are in place
    if (tile16.thread_rank() == 0) {
        int acc = 0;
        for (unsigned int k = 0; k < tile16.size(); ++k) acc += scratch[rank + k];
        sums16[i / 16] = acc;
    }
    block.sync();
}

int main()
{
    const int blocks = 48;
    const int n = blocks * BLOCK - 45;  // the last tiles are partly empty
    const int tiles32 = blocks * BLOCK / 32;
    const int tiles16 = blocks * BLOCK / 16;
    std::vector<int> x(n);
    for (int i = 0; i < n; ++i) x[i] = (i * 31 + 7) % 23 - 11;

    int *d_x, *d_shfl, *d_ballot, *d_reduce, *d_sum16;
    CUDA_CHECK(musaMalloc(&d_x, n * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_shfl, tiles32 * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_ballot, tiles32 * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_reduce, tiles32 * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_sum16, tiles16 * sizeof(int)));
    CUDA_CHECK(musaMemcpy(d_x, x.data(), n * sizeof(int), musaMemcpyHostToDevice));
    tile_stats<<<blocks, BLOCK>>>(d_x, n, d_shfl, d_ballot, d_reduce, d_sum16);
    CUDA_CHECK_KERNEL();

    std::vector<int> shfl(tiles32), ballot(tiles32), reduced(tiles32), sum16(tiles16);
    CUDA_CHECK(musaMemcpy(shfl.data(), d_shfl, tiles32 * sizeof(int), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(ballot.data(), d_ballot, tiles32 * sizeof(int), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(reduced.data(), d_reduce, tiles32 * sizeof(int), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(sum16.data(), d_sum16, tiles16 * sizeof(int), musaMemcpyDeviceToHost));

    int bad = 0;
    for (int t = 0; t < tiles32; ++t) {
        int sum = 0, threes = 0;
        for (int i = t * 32; i < (t + 1) * 32 && i < n; ++i) {
            sum += x[i];
            threes += x[i] % 3 == 0 ? 1 : 0;
        }
        bad += (shfl[t] != sum) + (reduced[t] != sum) + (ballot[t] != threes);
    }
    for (int t = 0; t < tiles16; ++t) {
        int sum = 0;
        for (int i = t * 16; i < (t + 1) * 16 && i < n; ++i) sum += x[i];
        bad += sum16[t] != sum ? 1 : 0;
    }
    CUDA_CHECK(musaFree(d_x));
    CUDA_CHECK(musaFree(d_shfl));
    CUDA_CHECK(musaFree(d_ballot));
    CUDA_CHECK(musaFree(d_reduce));
    CUDA_CHECK(musaFree(d_sum16));
    std::printf("%s coop_groups tiles32=%d tiles16=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", tiles32,
                tiles16, bad);
    return bad == 0 ? 0 : 1;
}
