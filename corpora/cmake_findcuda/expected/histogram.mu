// histogram.cu -- 64-bin histogram with per-block shared-memory bins, checked against the CPU.
#include <cstdio>
#include <vector>

#define CHECK(call)                                                                    \
    do {                                                                               \
        musaError_t err_ = (call);                                                     \
        if (err_ != musaSuccess) {                                                     \
            std::printf("FAIL cmake_findcuda: %s at line %d\n", musaGetErrorString(err_), __LINE__); \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

constexpr int BINS = 64;

__global__ void histogram_kernel(const unsigned char* data, int n, unsigned int* bins)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&local[data[i] % BINS], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

int main()
{
    const int n = 200000;
    std::vector<unsigned char> data(n);
    std::vector<unsigned int> want(BINS, 0), got(BINS, 0);
    for (int i = 0; i < n; ++i) {
        data[i] = static_cast<unsigned char>((i * 2654435761u) >> 24);
        ++want[data[i] % BINS];
    }
    unsigned char* d_data;
    unsigned int* d_bins;
    CHECK(musaMalloc(&d_data, n));
    CHECK(musaMalloc(&d_bins, BINS * sizeof(unsigned int)));
    CHECK(musaMemcpy(d_data, data.data(), n, musaMemcpyHostToDevice));
    CHECK(musaMemset(d_bins, 0, BINS * sizeof(unsigned int)));
    histogram_kernel<<<40, 128>>>(d_data, n, d_bins);
    CHECK(musaGetLastError());
    CHECK(musaMemcpy(got.data(), d_bins, BINS * sizeof(unsigned int), musaMemcpyDeviceToHost));
    int bad = 0;
    for (int b = 0; b < BINS; ++b) bad += got[b] != want[b];
#ifdef HIST_VERBOSE
    for (int b = 0; b < BINS; ++b) std::printf("bin %d: %u\n", b, got[b]);
#endif
    musaFree(d_data);
    musaFree(d_bins);
    std::printf("%s cmake_findcuda bins=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", BINS, bad);
    return bad == 0 ? 0 : 1;
}
