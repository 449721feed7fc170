// softmax.cu -- row-wise softmax, one block per row: a shared-memory max, then a shared-memory
// sum of exponentials, checked against a double-precision CPU softmax.
#include <cmath>
#include <cstdio>
#include <vector>

constexpr int THREADS = 128;

__global__ void softmax_kernel(const float* x, float* y, int cols)
{
    __shared__ float scratch[THREADS];
    const float* row = x + static_cast<size_t>(blockIdx.x) * cols;
    float* out = y + static_cast<size_t>(blockIdx.x) * cols;
    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
    scratch[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) scratch[threadIdx.x] = fmaxf(scratch[threadIdx.x], scratch[threadIdx.x + s]);
        __syncthreads();
    }
    m = scratch[0];
    __syncthreads();
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) sum += expf(row[c] - m);
    scratch[threadIdx.x] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) scratch[threadIdx.x] += scratch[threadIdx.x + s];
        __syncthreads();
    }
    sum = scratch[0];
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(row[c] - m) / sum;
}

int main()
{
    const int rows = 64, cols = 1000;
    std::vector<float> x(rows * cols), y(rows * cols);
    for (int i = 0; i < rows * cols; ++i) x[i] = static_cast<float>((i * 37) % 101) * 0.05f - 2.5f;
    float *d_x, *d_y;
    musaMalloc(&d_x, x.size() * sizeof(float));
    musaMalloc(&d_y, y.size() * sizeof(float));
    musaMemcpy(d_x, x.data(), x.size() * sizeof(float), musaMemcpyHostToDevice);
    softmax_kernel<<<rows, THREADS>>>(d_x, d_y, cols);
    musaError_t err = musaGetLastError();
    if (err == musaSuccess) err = musaMemcpy(y.data(), d_y, y.size() * sizeof(float), musaMemcpyDeviceToHost);
    if (err != musaSuccess) {
        std::printf("FAIL make_script: %s\n", musaGetErrorString(err));
        return 1;
    }
    int bad = 0;
    for (int r = 0; r < rows; ++r) {
        double m = -1e30, sum = 0.0;
        for (int c = 0; c < cols; ++c) m = std::fmax(m, x[r * cols + c]);
        for (int c = 0; c < cols; ++c) sum += std::exp(x[r * cols + c] - m);
        for (int c = 0; c < cols; ++c) bad += std::fabs(y[r * cols + c] - std::exp(x[r * cols + c] - m) / sum) > 1e-5;
    }
    musaFree(d_x);
    musaFree(d_y);
    std::printf("%s make_script rows=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", rows, bad);
    return bad == 0 ? 0 : 1;
}
