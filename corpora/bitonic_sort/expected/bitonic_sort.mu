// bitonic_sort: 32 blocks each sort their own 1024 unsigned keys in shared memory with a
// bitonic network; 512 threads handle two positions each. Checked against std::sort.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <musa_runtime.h>

#define CHECK_CUDA(call)                                                                   \
    do {                                                                                   \
        const musaError_t e = (call);                                                      \
        if (e != musaSuccess) {                                                            \
            std::printf("FAIL bitonic_sort: %s -> %s\n", #call, musaGetErrorString(e));    \
            std::exit(2);                                                                  \
        }                                                                                  \
    } while (0)

constexpr int SEGMENT = 1024;
constexpr int THREADS = 512;

__global__ void bitonic_segments(unsigned int* keys)
{
    __shared__ unsigned int s[SEGMENT];
    unsigned int* seg = keys + blockIdx.x * SEGMENT;
    for (int i = threadIdx.x; i < SEGMENT; i += blockDim.x) s[i] = seg[i];
    __syncthreads();
    for (int k = 2; k <= SEGMENT; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            // Each pair (i, i ^ j) is handled once, by the thread owning the smaller index.
            for (int i = threadIdx.x; i < SEGMENT; i += blockDim.x) {
                const int partner = i ^ j;
                if (partner > i) {
                    const bool ascending = (i & k) == 0;
                    const unsigned int a = s[i];
                    const unsigned int b = s[partner];
                    if ((a > b) == ascending) {
                        s[i] = b;
                        s[partner] = a;
                    }
                }
            }
            __syncthreads();
        }
    }
    for (int i = threadIdx.x; i < SEGMENT; i += blockDim.x) seg[i] = s[i];
}

int main()
{
    const int segments = 32;
    const int n = segments * SEGMENT;
    std::vector<unsigned int> keys(n), got(n);
    unsigned int state = 7u;
    for (int i = 0; i < n; ++i) {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        keys[i] = state % 5000u;  // duplicates included
    }
    unsigned int* d_keys = nullptr;
    CHECK_CUDA(musaMalloc(&d_keys, n * sizeof(unsigned int)));
    CHECK_CUDA(musaMemcpy(d_keys, keys.data(), n * sizeof(unsigned int), musaMemcpyHostToDevice));
    bitonic_segments<<<segments, THREADS>>>(d_keys);
    CHECK_CUDA(musaGetLastError());
    CHECK_CUDA(musaMemcpy(got.data(), d_keys, n * sizeof(unsigned int), musaMemcpyDeviceToHost));
    CHECK_CUDA(musaFree(d_keys));

    int bad = 0;
    for (int s = 0; s < segments; ++s) {
        std::sort(keys.begin() + s * SEGMENT, keys.begin() + (s + 1) * SEGMENT);
    }
    for (int i = 0; i < n; ++i) bad += got[i] != keys[i] ? 1 : 0;
    std::printf("%s bitonic_sort segments=%d segment=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", segments,
                SEGMENT, bad);
    return bad == 0 ? 0 : 1;
}
