// Warp collectives and cooperative groups at the build's warp width; prints PASS when all hold.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cstdio>
namespace cg = cooperative_groups;

static int failures = 0;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            std::printf("FAIL line %d: %s\n", __LINE__, #cond);                      \
            ++failures;                                                              \
        }                                                                            \
    } while (0)

// out[t*8 + k]: the k-th result of thread t.
__global__ void collectives(int* out) {
    int t = threadIdx.x, lane = t % warpSize;
    int* o = out + t * 8;
    int v = lane;
    for (int d = warpSize / 2; d > 0; d /= 2) v += __shfl_down_sync(0xffffffff, v, d);
    o[0] = __shfl_sync(0xffffffff, v, 0);                   // sum of lanes in lane 0, broadcast
    o[1] = __shfl_xor_sync(0xffffffff, lane, 1);            // neighbour
    o[2] = __shfl_up_sync(0xffffffff, lane, 1);             // lane - 1, lane 0 keeps its own
    o[3] = __shfl_sync(0xffffffff, lane, 3, 8);             // lane 3 of each group of 8
    o[4] = (int)__ballot_sync(0xffffffff, lane < 3);
    o[5] = __any_sync(0xffffffff, lane == 5) * 10 + __all_sync(0xffffffff, lane < warpSize);
    o[6] = __reduce_add_sync(0xffffffff, 1u);
    auto tile = cg::tiled_partition<16>(cg::this_thread_block());
    o[7] = cg::reduce(tile, (int)tile.thread_rank(), cg::plus<int>()) * 1000 + (int)tile.meta_group_rank() +
           (int)tile.ballot(tile.thread_rank() == 1) * 100000;
}

__global__ void grid_total(const int* in, int* partial, int* out) {
    cg::grid_group grid = cg::this_grid();
    int b = blockIdx.x;
    if (threadIdx.x == 0) partial[b] = in[b];
    grid.sync();
    if (threadIdx.x == 0) {
        int s = 0;
        for (int i = 0; i < (int)gridDim.x; ++i) s += partial[i];
        out[b] = s;
    }
}

int main() {
    const int threads = 256;
    int* out;
    cudaMallocManaged(&out, threads * 8 * sizeof(int));
    collectives<<<1, threads>>>(out);
    cudaDeviceSynchronize();
    int W = warpSize;
    for (int t = 0; t < threads; ++t) {
        int lane = t % W;
        const int* o = out + t * 8;
        CHECK(o[0] == W * (W - 1) / 2);
        CHECK(o[1] == (lane ^ 1));
        CHECK(o[2] == (lane ? lane - 1 : 0));
        CHECK(o[3] == lane / 8 * 8 + 3);
        CHECK(o[4] == 7);
        CHECK(o[5] == 11);
        CHECK(o[6] == W);
        CHECK(o[7] == 120 * 1000 + t / 16 + 2 * 100000);
    }
    const int blocks = 8;
    int *in, *partial, *total;
    cudaMallocManaged(&in, blocks * sizeof(int));
    cudaMallocManaged(&partial, blocks * sizeof(int));
    cudaMallocManaged(&total, blocks * sizeof(int));
    for (int i = 0; i < blocks; ++i) in[i] = i + 1;
    void* args[] = {&in, &partial, &total};
    CHECK(cudaLaunchCooperativeKernel((void*)grid_total, blocks, 64, args, 0, 0) == cudaSuccess);
    for (int i = 0; i < blocks; ++i) CHECK(total[i] == blocks * (blocks + 1) / 2);
    CHECK(cudaLaunchCooperativeKernel(grid_total, 100000, 1024, args, 0, 0) == cudaErrorCooperativeLaunchTooLarge);
    std::printf(failures ? "FAILED %d\n" : "PASS\n", failures);
    return failures != 0;
}
