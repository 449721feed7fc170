// templates: one block-sum kernel templated on element type and block size (launched with
// explicit arguments), an axpy kernel whose type is deduced from its arguments, and a map
// kernel taking a functor.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

template <typename T, int BLOCK>
__global__ void block_sum(const T* in, T* out, int n)
{
    __shared__ T buf[BLOCK];
    const int i = blockIdx.x * BLOCK + threadIdx.x;
    buf[threadIdx.x] = i < n ? in[i] : T(0);
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) buf[threadIdx.x] += buf[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}

template <typename T>
__global__ void axpy(T alpha, const T* x, T* y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i] + y[i];
}

struct Square {
    template <typename T>
    __host__ __device__ T operator()(T v) const { return v * v; }
};

template <typename T, typename Op>
__global__ void map(T* data, int n, Op op)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] = op(data[i]);
}

template <typename T, int BLOCK>
static int check_block_sum(int n)
{
    std::vector<T> h(n);
    for (int i = 0; i < n; ++i) h[i] = static_cast<T>(i % 10);
    const int blocks = (n + BLOCK - 1) / BLOCK;
    T *d_in = nullptr, *d_out = nullptr;
    CUDA_CHECK(musaMalloc(&d_in, n * sizeof(T)));
    CUDA_CHECK(musaMalloc(&d_out, blocks * sizeof(T)));
    CUDA_CHECK(musaMemcpy(d_in, h.data(), n * sizeof(T), musaMemcpyHostToDevice));
    block_sum<T, BLOCK><<<blocks, BLOCK>>>(d_in, d_out, n);
    CUDA_CHECK_KERNEL();
    std::vector<T> got(blocks);
    CUDA_CHECK(musaMemcpy(got.data(), d_out, blocks * sizeof(T), musaMemcpyDeviceToHost));
    int bad = 0;
    for (int b = 0; b < blocks; ++b) {
        T want = T(0);
        for (int i = b * BLOCK; i < (b + 1) * BLOCK && i < n; ++i) want += h[i];
        bad += got[b] != want ? 1 : 0;
    }
    CUDA_CHECK(musaFree(d_in));
    CUDA_CHECK(musaFree(d_out));
    return bad;
}

int main()
{
    int bad = check_block_sum<int, 128>(10000) + check_block_sum<double, 64>(5000);

    const int n = 4096;
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
        x[i] = static_cast<float>(i % 8);
        y[i] = 1.0f;
    }
    float *d_x = nullptr, *d_y = nullptr;
    CUDA_CHECK(musaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(musaMalloc(&d_y, n * sizeof(float)));
    CUDA_CHECK(musaMemcpy(d_x, x.data(), n * sizeof(float), musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemcpy(d_y, y.data(), n * sizeof(float), musaMemcpyHostToDevice));
    axpy<<<n / 256, 256>>>(3.0f, d_x, d_y, n);  // T = float, deduced
    CUDA_CHECK_KERNEL();
    map<<<n / 256, 256>>>(d_y, n, Square{});  // T and Op deduced
    CUDA_CHECK_KERNEL();
    CUDA_CHECK(musaMemcpy(y.data(), d_y, n * sizeof(float), musaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) {
        const float v = 3.0f * x[i] + 1.0f;
        bad += y[i] != v * v ? 1 : 0;
    }
    CUDA_CHECK(musaFree(d_x));
    CUDA_CHECK(musaFree(d_y));
    std::printf("%s templates mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", bad);
    return bad == 0 ? 0 : 1;
}
