// dynamic_smem: two kernels whose shared memory is sized at launch time. The first reverses each
// block's segment through an `extern __shared__` float array; the second carves one raw extern
// buffer into an int array and a float array and runs on a non-default stream.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

__global__ void reverse_segments(const float* in, float* out, int n)
{
    extern __shared__ float segment[];
    const int base = blockIdx.x * blockDim.x;
    const int i = base + threadIdx.x;
    segment[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    const int valid = min(static_cast<int>(blockDim.x), n - base);
    if (static_cast<int>(threadIdx.x) < valid) {
        out[i] = segment[valid - 1 - threadIdx.x];
    }
}

// out[i] = key[i] * value[j] where j is i's mirror within the block: both arrays live in one
// dynamically sized buffer, ints first, then floats.
__global__ void mirrored_products(const int* keys, const float* values, float* out, int n)
{
    extern __shared__ unsigned char raw[];
    int* s_keys = reinterpret_cast<int*>(raw);
    float* s_values = reinterpret_cast<float*>(raw + blockDim.x * sizeof(int));
    const int i = blockIdx.x * blockDim.x + threadIdx.x;  // n is a multiple of blockDim.x
    s_keys[threadIdx.x] = keys[i];
    s_values[threadIdx.x] = values[i];
    __syncthreads();
    out[i] = static_cast<float>(s_keys[threadIdx.x]) * s_values[blockDim.x - 1 - threadIdx.x];
}

int main()
{
    const int n = 50000;
    const int threads = 192;
    std::vector<float> in(n), out(n);
    for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i);

    float *d_in = nullptr, *d_out = nullptr;
    CUDA_CHECK(musaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(musaMalloc(&d_out, n * sizeof(float)));
    CUDA_CHECK(musaMemcpy(d_in, in.data(), n * sizeof(float), musaMemcpyHostToDevice));
    const int blocks = (n + threads - 1) / threads;
    reverse_segments<<<blocks, threads, threads * sizeof(float)>>>(d_in, d_out, n);
    CUDA_CHECK_KERNEL();
    CUDA_CHECK(musaMemcpy(out.data(), d_out, n * sizeof(float), musaMemcpyDeviceToHost));
    int bad = 0;
    for (int b = 0; b * threads < n; ++b) {
        const int base = b * threads;
        const int valid = n - base < threads ? n - base : threads;
        for (int t = 0; t < valid; ++t) {
            bad += out[base + t] != in[base + valid - 1 - t] ? 1 : 0;
        }
    }

    const int m = 128 * 64;
    const int block2 = 128;
    std::vector<int> keys(m);
    std::vector<float> values(m), prod(m);
    for (int i = 0; i < m; ++i) {
        keys[i] = i % 13 - 6;
        values[i] = 0.5f * static_cast<float>(i % 9);
    }
    int* d_keys = nullptr;
    float *d_values = nullptr, *d_prod = nullptr;
    CUDA_CHECK(musaMalloc(&d_keys, m * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_values, m * sizeof(float)));
    CUDA_CHECK(musaMalloc(&d_prod, m * sizeof(float)));
    CUDA_CHECK(musaMemcpy(d_keys, keys.data(), m * sizeof(int), musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemcpy(d_values, values.data(), m * sizeof(float), musaMemcpyHostToDevice));
    musaStream_t stream;
    CUDA_CHECK(musaStreamCreate(&stream));
    const size_t smem = block2 * (sizeof(int) + sizeof(float));
    mirrored_products<<<m / block2, block2, smem, stream>>>(d_keys, d_values, d_prod, m);
    CUDA_CHECK(musaGetLastError());
    CUDA_CHECK(musaStreamSynchronize(stream));
    CUDA_CHECK(musaMemcpy(prod.data(), d_prod, m * sizeof(float), musaMemcpyDeviceToHost));
    for (int i = 0; i < m; ++i) {
        const int base = i - i % block2;
        const int mirror = base + block2 - 1 - i % block2;
        bad += prod[i] != static_cast<float>(keys[i]) * values[mirror] ? 1 : 0;
    }

    CUDA_CHECK(musaStreamDestroy(stream));
    CUDA_CHECK(musaFree(d_in));
    CUDA_CHECK(musaFree(d_out));
    CUDA_CHECK(musaFree(d_keys));
    CUDA_CHECK(musaFree(d_values));
    CUDA_CHECK(musaFree(d_prod));
    std::printf("%s dynamic_smem n=%d m=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, m, bad);
    return bad == 0 ? 0 : 1;
}
