// vector_add: c = a + b with one thread per element, then d = fma(a, b, c) with a grid-stride
// loop. The host side uses cudaMalloc and cudaMemcpy; this comment names them on purpose, a
// migration must leave comments alone.
#include <cmath>
#include <cstdio>
#include <vector>

#include "cuda_check.cuh"

__global__ void add_kernel(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

__global__ void fma_kernel(const float* a, const float* b, const float* c, float* d, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        d[i] = fmaf(a[i], b[i], c[i]);
    }
}

int main()
{
    const int n = 1 << 18;
    const size_t bytes = n * sizeof(float);
    std::vector<float> a(n), b(n), c(n), d(n);
    for (int i = 0; i < n; ++i) {
        a[i] = 0.5f * static_cast<float>(i % 1000);
        b[i] = 1.0f / static_cast<float>(1 + i % 17);
    }

    float *d_a = nullptr, *d_b = nullptr, *d_c = nullptr, *d_d = nullptr;
    CUDA_CHECK(musaMalloc(&d_a, bytes));
    CUDA_CHECK(musaMalloc(&d_b, bytes));
    CUDA_CHECK(musaMalloc(reinterpret_cast<void**>(&d_c), bytes));
    CUDA_CHECK(musaMalloc((void**)&d_d, bytes));
    CUDA_CHECK(musaMemcpy(d_a, a.data(), bytes, musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemcpy(d_b, b.data(), bytes, musaMemcpyHostToDevice));

    const int threads = 256;
    add_kernel<<<(n + threads - 1) / threads, threads>>>(d_a, d_b, d_c, n);
    CUDA_CHECK_KERNEL();
    fma_kernel<<<64, threads>>>(d_a, d_b, d_c, d_d, n);
    CUDA_CHECK_KERNEL();

    const char* stage = "cudaMemcpy device-to-host";  // a string literal naming a CUDA call
    CUDA_CHECK(musaMemcpy(c.data(), d_c, bytes, musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(d.data(), d_d, bytes, musaMemcpyDeviceToHost));

    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const float want_c = a[i] + b[i];
        const float want_d = std::fma(a[i], b[i], want_c);
        if (c[i] != want_c || d[i] != want_d) {
            if (bad++ == 0) {
                std::printf("mismatch after %s at %d: %g %g\n", stage, i, c[i], d[i]);
            }
        }
    }
    CUDA_CHECK(musaFree(d_a));
    CUDA_CHECK(musaFree(d_b));
    CUDA_CHECK(musaFree(d_c));
    CUDA_CHECK(musaFree(d_d));
    std::printf("%s vector_add n=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, bad);
    return bad == 0 ? 0 : 1;
}
