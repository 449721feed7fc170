// grid_sync: one kernel, two phases separated by a grid-wide barrier. Phase one writes each
// block's partial sum; after this_grid().sync() every thread reads all partials and writes
// total - x[i]. The kernel is launched with cudaLaunchCooperativeKernel on a grid small enough
// for all blocks to be resident at once.
#include <cstdio>
#include <vector>

#include <cooperative_groups.h>

#include "cuda_check.muh"

namespace cg = cooperative_groups;

#define BLOCK 128

__global__ void total_minus_self(const int* x, int* partial, int* out, int n)
{
    cg::grid_group grid = cg::this_grid();
    __shared__ int buf[BLOCK];
    int acc = 0;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) acc += x[i];
    buf[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) buf[threadIdx.x] += buf[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = buf[0];

    grid.sync();  // every block's partial is visible from here on

    int total = 0;
    for (int b = 0; b < static_cast<int>(gridDim.x); ++b) total += partial[b];
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) out[i] = total - x[i];
}

int main()
{
    int device = 0;
    CUDA_CHECK(musaGetDevice(&device));
    int cooperative = 0;
    CUDA_CHECK(musaDeviceGetAttribute(&cooperative, musaDevAttrCooperativeLaunch, device));
    if (!cooperative) {
        std::printf("FAIL grid_sync device does not support cooperative launches\n");
        return 1;
    }
    int sms = 0, per_sm = 0;
    CUDA_CHECK(musaDeviceGetAttribute(&sms, musaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(musaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, total_minus_self, BLOCK, 0));
    int blocks = sms * per_sm;
    if (blocks > 8) blocks = 8;
    if (blocks < 1) {
        std::printf("FAIL grid_sync no block can be resident (per_sm=%d)\n", per_sm);
        return 1;
    }

    int n = 20000;
    std::vector<int> x(n), out(n);
    long long total = 0;
    for (int i = 0; i < n; ++i) {
        x[i] = i % 19 - 9;
        total += x[i];
    }
    int *d_x, *d_partial, *d_out;
    CUDA_CHECK(musaMalloc(&d_x, n * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_partial, blocks * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_out, n * sizeof(int)));
    CUDA_CHECK(musaMemcpy(d_x, x.data(), n * sizeof(int), musaMemcpyHostToDevice));
    void* args[] = {&d_x, &d_partial, &d_out, &n};
    CUDA_CHECK(musaLaunchCooperativeKernel(reinterpret_cast<void*>(total_minus_self), dim3(blocks), dim3(BLOCK),
                                           args, 0, nullptr));
    CUDA_CHECK(musaDeviceSynchronize());
    CUDA_CHECK(musaMemcpy(out.data(), d_out, n * sizeof(int), musaMemcpyDeviceToHost));

    int bad = 0;
    for (int i = 0; i < n; ++i) bad += out[i] != total - x[i] ? 1 : 0;
    CUDA_CHECK(musaFree(d_x));
    CUDA_CHECK(musaFree(d_partial));
    CUDA_CHECK(musaFree(d_out));
    std::printf("%s grid_sync blocks=%d n=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", blocks, n, bad);
    return bad == 0 ? 0 : 1;
}
