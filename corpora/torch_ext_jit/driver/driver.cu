// driver.cu -- runs gelu_kernel.cu without PyTorch against a CPU GELU.
#include <cmath>
#include <cstdio>
#include <vector>

#include "../csrc/gelu_kernel.cuh"

int main()
{
    const int n = 10007;  // not a multiple of 4: the scalar tail runs too
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; ++i) x[i] = -6.0f + 12.0f * static_cast<float>(i) / static_cast<float>(n);
    float *d_x, *d_y;
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_y, n * sizeof(float));
    cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaError_t err = launch_gelu(d_x, d_y, n, 0);
    if (err == cudaSuccess) err = cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost);
    if (err != cudaSuccess) {
        std::printf("FAIL torch_ext_jit: %s\n", cudaGetErrorString(err));
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const double v = x[i];
        const double want = 0.5 * v * (1.0 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
        bad += std::fabs(y[i] - want) > 1e-5;
    }
    cudaFree(d_x);
    cudaFree(d_y);
    std::printf("%s torch_ext_jit n=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, bad);
    return bad == 0 ? 0 : 1;
}
