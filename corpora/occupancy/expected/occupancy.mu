// occupancy: ask the runtime how many blocks of a kernel fit on one multiprocessor, with and
// without dynamic shared memory, and which block size it suggests; check that the answers are
// plausible for the device, then launch with the suggested size and check the result.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

__global__ void scale_by_index(float* data, int n)
{
    extern __shared__ float staging[];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    staging[threadIdx.x] = i < n ? data[i] : 0.0f;
    __syncthreads();
    if (i < n) data[i] = staging[threadIdx.x] * static_cast<float>(i % 4);
}

int main()
{
    musaDeviceProp prop;
    CUDA_CHECK(musaGetDeviceProperties(&prop, 0));

    int blocks256 = 0, blocks256_smem = 0;
    CUDA_CHECK(musaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks256, scale_by_index, 256, 256 * sizeof(float)));
    const size_t big_smem = prop.sharedMemPerBlock / 2;  // at most a few such blocks fit at once
    CUDA_CHECK(musaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks256_smem, scale_by_index, 256, big_smem));

    int min_grid = 0, block_size = 0;
    CUDA_CHECK(musaOccupancyMaxPotentialBlockSize(&min_grid, &block_size, scale_by_index, 0, 0));
    std::printf("info: blocks/SM at 256 threads=%d (with %zu B shared: %d), suggested block=%d grid>=%d\n",
                blocks256, big_smem, blocks256_smem, block_size, min_grid);

    bool ok = blocks256 >= 1 && blocks256 * 256 <= prop.maxThreadsPerMultiProcessor;
    ok = ok && blocks256_smem >= 1 && blocks256_smem <= blocks256;
    ok = ok && block_size >= 1 && block_size <= prop.maxThreadsPerBlock && min_grid >= 1;

    // The suggested block size was computed for 0 bytes of dynamic shared memory per block; the
    // kernel needs block_size floats, which is far below any device's limit at these sizes.
    const int n = 10000;
    std::vector<float> h(n);
    for (int i = 0; i < n; ++i) h[i] = static_cast<float>(i % 10);
    float* d = nullptr;
    CUDA_CHECK(musaMalloc(&d, n * sizeof(float)));
    CUDA_CHECK(musaMemcpy(d, h.data(), n * sizeof(float), musaMemcpyHostToDevice));
    scale_by_index<<<(n + block_size - 1) / block_size, block_size, block_size * sizeof(float)>>>(d, n);
    CUDA_CHECK_KERNEL();
    std::vector<float> got(n);
    CUDA_CHECK(musaMemcpy(got.data(), d, n * sizeof(float), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaFree(d));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += got[i] != h[i] * static_cast<float>(i % 4) ? 1 : 0;
    ok = ok && bad == 0;
    std::printf("%s occupancy blocks_per_sm=%d block_size=%d mismatches=%d\n", ok ? "PASS" : "FAIL", blocks256,
                block_size, bad);
    return ok ? 0 : 1;
}
