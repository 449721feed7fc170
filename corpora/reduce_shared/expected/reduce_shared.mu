// reduce_shared: sum 200,000 integers. Each block adds two elements per thread while loading,
// halves the active threads in shared memory until one value is left, and writes one partial
// sum; a second launch with a single block reduces the partial sums.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

#define BLOCK 256

__global__ void block_sum(const unsigned int* in, unsigned int* out, int n)
{
    __shared__ unsigned int buf[BLOCK];
    const unsigned int tid = threadIdx.x;
    const unsigned int i = blockIdx.x * (2 * BLOCK) + tid;
    unsigned int v = 0;
    if (i < n) v += in[i];
    if (i + BLOCK < n) v += in[i + BLOCK];
    buf[tid] = v;
    __syncthreads();
    for (unsigned int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            buf[tid] += buf[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = buf[0];
    }
}

int main()
{
    const int n = 200000;  // deliberately not a multiple of the block's 512 elements
    std::vector<unsigned int> h(n);
    unsigned long long want = 0;
    for (int i = 0; i < n; ++i) {
        h[i] = static_cast<unsigned int>((i * 7919u) % 101u);
        want += h[i];
    }
    const int blocks = (n + 2 * BLOCK - 1) / (2 * BLOCK);

    unsigned int *d_in = nullptr, *d_partial = nullptr, *d_total = nullptr;
    CUDA_CHECK(musaMalloc(&d_in, n * sizeof(unsigned int)));
    CUDA_CHECK(musaMalloc(&d_partial, blocks * sizeof(unsigned int)));
    CUDA_CHECK(musaMalloc(&d_total, sizeof(unsigned int)));
    CUDA_CHECK(musaMemcpy(d_in, h.data(), n * sizeof(unsigned int), musaMemcpyHostToDevice));

    block_sum<<<blocks, BLOCK>>>(d_in, d_partial, n);
    CUDA_CHECK_KERNEL();
    // blocks <= 2 * BLOCK, so one block finishes the job.
    block_sum<<<1, BLOCK>>>(d_partial, d_total, blocks);
    CUDA_CHECK_KERNEL();

    unsigned int got = 0;
    CUDA_CHECK(musaMemcpy(&got, d_total, sizeof(got), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaFree(d_in));
    CUDA_CHECK(musaFree(d_partial));
    CUDA_CHECK(musaFree(d_total));
    const bool ok = static_cast<unsigned long long>(got) == want;
    std::printf("%s reduce_shared n=%d blocks=%d sum=%u expected=%llu\n", ok ? "PASS" : "FAIL", n, blocks, got,
                want);
    return ok ? 0 : 1;
}
