// prefix_scan: inclusive prefix sum of 65,436 integers. Each block scans its 256 elements with a
// double-buffered Hillis-Steele scan in shared memory and records its total; one block scans
// those totals; a last kernel adds each block's offset.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

#define BLOCK 256

__global__ void scan_blocks(const int* in, int* out, int* block_totals, int n)
{
    __shared__ int buf[2][BLOCK];
    const int t = threadIdx.x;
    const int i = blockIdx.x * BLOCK + t;
    int pout = 0;
    buf[pout][t] = i < n ? in[i] : 0;
    __syncthreads();
    for (int offset = 1; offset < BLOCK; offset <<= 1) {
        const int pin = pout;
        pout = 1 - pout;
        buf[pout][t] = buf[pin][t] + (t >= offset ? buf[pin][t - offset] : 0);
        __syncthreads();
    }
    if (i < n) {
        out[i] = buf[pout][t];
    }
    if (block_totals != nullptr && t == BLOCK - 1) {
        block_totals[blockIdx.x] = buf[pout][t];
    }
}

__global__ void add_offsets(int* data, const int* scanned_totals, int n)
{
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    if (blockIdx.x > 0 && i < n) {
        data[i] += scanned_totals[blockIdx.x - 1];
    }
}

int main()
{
    const int n = BLOCK * BLOCK - 100;
    const int blocks = (n + BLOCK - 1) / BLOCK;  // <= BLOCK, so one block scans the totals
    std::vector<int> in(n), out(n);
    for (int i = 0; i < n; ++i) in[i] = (i * 37) % 11 - 5;

    int *d_in = nullptr, *d_out = nullptr, *d_totals = nullptr, *d_scanned = nullptr;
    CUDA_CHECK(musaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_out, n * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_totals, blocks * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_scanned, blocks * sizeof(int)));
    CUDA_CHECK(musaMemcpy(d_in, in.data(), n * sizeof(int), musaMemcpyHostToDevice));

    scan_blocks<<<blocks, BLOCK>>>(d_in, d_out, d_totals, n);
    CUDA_CHECK(musaGetLastError());
    scan_blocks<<<1, BLOCK>>>(d_totals, d_scanned, nullptr, blocks);
    CUDA_CHECK(musaGetLastError());
    add_offsets<<<blocks, BLOCK>>>(d_out, d_scanned, n);
    CUDA_CHECK_KERNEL();
    CUDA_CHECK(musaMemcpy(out.data(), d_out, n * sizeof(int), musaMemcpyDeviceToHost));

    int bad = 0;
    int running = 0;
    for (int i = 0; i < n; ++i) {
        running += in[i];
        bad += out[i] != running ? 1 : 0;
    }
    CUDA_CHECK(musaFree(d_in));
    CUDA_CHECK(musaFree(d_out));
    CUDA_CHECK(musaFree(d_totals));
    CUDA_CHECK(musaFree(d_scanned));
    std::printf("%s prefix_scan n=%d blocks=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, blocks, bad);
    return bad == 0 ? 0 : 1;
}
