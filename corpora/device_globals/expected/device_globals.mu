// device_globals: kernels communicate through __device__ variables instead of arguments. A
// counter and a small table are reset from the host with cudaMemcpyToSymbol, updated by a
// kernel, and fetched with cudaMemcpyFromSymbol.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

constexpr int kBuckets = 16;

__device__ int g_multiples_of_seven;
__device__ unsigned int g_bucket_max[kBuckets];
__device__ float g_scale = 0.5f;  // initialised by the module, no copy needed

__global__ void scan_values(const unsigned int* values, float* scaled, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const unsigned int v = values[i];
        if (v % 7 == 0) {
            atomicAdd(&g_multiples_of_seven, 1);
        }
        atomicMax(&g_bucket_max[v % kBuckets], v);
        scaled[i] = g_scale * static_cast<float>(v);
    }
}

int main()
{
    const int n = 40000;
    std::vector<unsigned int> values(n);
    for (int i = 0; i < n; ++i) values[i] = (static_cast<unsigned int>(i) * 2654435761u) >> 12;

    const int zero = 0;
    const unsigned int zeros[kBuckets] = {};
    CUDA_CHECK(musaMemcpyToSymbol(g_multiples_of_seven, &zero, sizeof(zero)));
    CUDA_CHECK(musaMemcpyToSymbol(g_bucket_max, zeros, sizeof(zeros)));

    unsigned int* d_values = nullptr;
    float* d_scaled = nullptr;
    CUDA_CHECK(musaMalloc(&d_values, n * sizeof(unsigned int)));
    CUDA_CHECK(musaMalloc(&d_scaled, n * sizeof(float)));
    CUDA_CHECK(musaMemcpy(d_values, values.data(), n * sizeof(unsigned int), musaMemcpyHostToDevice));
    scan_values<<<40, 256>>>(d_values, d_scaled, n);
    CUDA_CHECK_KERNEL();

    int count = -1;
    unsigned int bucket_max[kBuckets] = {};
    float scale = 0.0f;
    std::vector<float> scaled(n);
    CUDA_CHECK(musaMemcpyFromSymbol(&count, g_multiples_of_seven, sizeof(count)));
    CUDA_CHECK(musaMemcpyFromSymbol(bucket_max, g_bucket_max, sizeof(bucket_max), 0, musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpyFromSymbol(&scale, g_scale, sizeof(scale)));
    CUDA_CHECK(musaMemcpy(scaled.data(), d_scaled, n * sizeof(float), musaMemcpyDeviceToHost));

    int want_count = 0;
    unsigned int want_max[kBuckets] = {};
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const unsigned int v = values[i];
        want_count += v % 7 == 0 ? 1 : 0;
        if (v > want_max[v % kBuckets]) want_max[v % kBuckets] = v;
        bad += scaled[i] != 0.5f * static_cast<float>(v) ? 1 : 0;
    }
    bad += count != want_count ? 1 : 0;
    bad += scale != 0.5f ? 1 : 0;
    for (int b = 0; b < kBuckets; ++b) bad += bucket_max[b] != want_max[b] ? 1 : 0;
    CUDA_CHECK(musaFree(d_values));
    CUDA_CHECK(musaFree(d_scaled));
    std::printf("%s device_globals n=%d multiples_of_seven=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n,
                count, bad);
    return bad == 0 ? 0 : 1;
}
