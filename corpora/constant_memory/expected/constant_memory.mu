// constant_memory: a 9-tap 1D convolution whose taps live in __constant__ memory. The taps are
// uploaded in two pieces (the second with a byte offset) to exercise cudaMemcpyToSymbol's
// offset argument, and read back with cudaMemcpyFromSymbol.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

#define RADIUS 4
#define TAPS (2 * RADIUS + 1)

__constant__ float c_taps[TAPS];
__constant__ int c_length;

__global__ void convolve(const float* in, float* out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= c_length) {
        return;
    }
    float acc = 0.0f;
    for (int t = -RADIUS; t <= RADIUS; ++t) {
        const int j = i + t;
        if (j >= 0 && j < c_length) {
            acc += c_taps[t + RADIUS] * in[j];
        }
    }
    out[i] = acc;
}

int main()
{
    const int n = 100000;
    const float taps[TAPS] = {0.0625f, 0.125f, 0.25f, 0.5f, 1.0f, 0.5f, 0.25f, 0.125f, 0.0625f};
    std::vector<float> in(n), out(n);
    for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i % 32 - 16);

    // First five taps at offset 0, the remaining four after them.
    CUDA_CHECK(musaMemcpyToSymbol(c_taps, taps, 5 * sizeof(float)));
    CUDA_CHECK(musaMemcpyToSymbol(c_taps, taps + 5, (TAPS - 5) * sizeof(float), 5 * sizeof(float),
                                  musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemcpyToSymbol(c_length, &n, sizeof(int)));
    float readback[TAPS] = {};
    CUDA_CHECK(musaMemcpyFromSymbol(readback, c_taps, sizeof(readback)));

    float *d_in = nullptr, *d_out = nullptr;
    CUDA_CHECK(musaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(musaMalloc(&d_out, n * sizeof(float)));
    CUDA_CHECK(musaMemcpy(d_in, in.data(), n * sizeof(float), musaMemcpyHostToDevice));
    convolve<<<(n + 255) / 256, 256>>>(d_in, d_out);
    CUDA_CHECK_KERNEL();
    CUDA_CHECK(musaMemcpy(out.data(), d_out, n * sizeof(float), musaMemcpyDeviceToHost));

    int bad = 0;
    for (int t = 0; t < TAPS; ++t) bad += readback[t] != taps[t] ? 1 : 0;
    for (int i = 0; i < n; ++i) {
        float want = 0.0f;  // powers of two times small integers: exact whatever the order
        for (int t = -RADIUS; t <= RADIUS; ++t) {
            if (i + t >= 0 && i + t < n) want += taps[t + RADIUS] * in[i + t];
        }
        bad += out[i] != want ? 1 : 0;
    }
    CUDA_CHECK(musaFree(d_in));
    CUDA_CHECK(musaFree(d_out));
    std::printf("%s constant_memory n=%d taps=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, TAPS, bad);
    return bad == 0 ? 0 : 1;
}
