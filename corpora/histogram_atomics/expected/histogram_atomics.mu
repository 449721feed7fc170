// histogram_atomics: a 256-bin histogram of skewed bytes (a few bins get most of the hits, so
// many blocks contend for the same counters). Version one adds straight into global memory;
// version two builds a private histogram per block with shared-memory atomics and then merges
// it into the global one.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

constexpr int kBins = 256;

__global__ void histogram_global(const unsigned char* data, int n, unsigned int* hist)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&hist[data[i]], 1u);
    }
}

__global__ void histogram_shared(const unsigned char* data, int n, unsigned int* hist)
{
    __shared__ unsigned int local[kBins];
    for (int b = threadIdx.x; b < kBins; b += blockDim.x) {
        local[b] = 0;
    }
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        atomicAdd(&local[data[i]], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < kBins; b += blockDim.x) {
        if (local[b] != 0) {
            atomicAdd(&hist[b], local[b]);
        }
    }
}

int main()
{
    const int n = 1 << 20;
    std::vector<unsigned char> data(n);
    std::vector<unsigned int> want(kBins, 0);
    unsigned int state = 12345u;
    for (int i = 0; i < n; ++i) {
        state = state * 1664525u + 1013904223u;
        const unsigned int r = state >> 24;
        // Three quarters of the bytes land in 4 bins, the rest anywhere.
        data[i] = static_cast<unsigned char>(r < 192 ? (r & 3u) * 64u : (state >> 8) & 0xffu);
        ++want[data[i]];
    }

    unsigned char* d_data = nullptr;
    unsigned int* d_hist = nullptr;
    CUDA_CHECK(musaMalloc(&d_data, n));
    CUDA_CHECK(musaMalloc(&d_hist, 2 * kBins * sizeof(unsigned int)));
    CUDA_CHECK(musaMemcpy(d_data, data.data(), n, musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemset(d_hist, 0, 2 * kBins * sizeof(unsigned int)));

    histogram_global<<<120, 256>>>(d_data, n, d_hist);
    CUDA_CHECK_KERNEL();
    histogram_shared<<<120, 256>>>(d_data, n, d_hist + kBins);
    CUDA_CHECK_KERNEL();

    std::vector<unsigned int> got(2 * kBins);
    CUDA_CHECK(musaMemcpy(got.data(), d_hist, got.size() * sizeof(unsigned int), musaMemcpyDeviceToHost));
    int bad = 0;
    for (int b = 0; b < kBins; ++b) {
        bad += got[b] != want[b] ? 1 : 0;
        bad += got[kBins + b] != want[b] ? 1 : 0;
    }
    CUDA_CHECK(musaFree(d_data));
    CUDA_CHECK(musaFree(d_hist));
    std::printf("%s histogram_atomics n=%d bins=%d bad_bins=%d\n", bad == 0 ? "PASS" : "FAIL", n, kBins, bad);
    return bad == 0 ? 0 : 1;
}
