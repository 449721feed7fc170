// driver.cu -- runs the fused_ops kernels without PyTorch: random inputs, the launchers of
// csrc/kernels.cu, a CPU reference, one PASS/FAIL line.
#include <cmath>
#include <cstdio>
#include <vector>

#include "../csrc/kernels.cuh"

int main()
{
    const int n = 10000, rows = 48, cols = 700;
    std::vector<float> x(n), y(n), m(rows * cols), sums(rows);
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 97) * 0.25f - 12.0f;
    for (int i = 0; i < rows * cols; ++i) m[i] = static_cast<float>((i * 7) % 31) - 15.0f;

    float *d_x = nullptr, *d_y = nullptr, *d_m = nullptr, *d_s = nullptr;
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_y, n * sizeof(float));
    cudaMalloc(&d_m, rows * cols * sizeof(float));
    cudaMalloc(&d_s, rows * sizeof(float));
    cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(d_m, m.data(), rows * cols * sizeof(float), cudaMemcpyHostToDevice);
    cudaError_t err = launch_scale_add(d_x, d_y, 2.0f, 0.5f, n, stream);
    if (err == cudaSuccess) err = launch_row_sum(d_m, d_s, rows, cols, stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
    if (err != cudaSuccess) {
        std::printf("FAIL torch_ext_setup: %s\n", cudaGetErrorString(err));
        return 1;
    }
    cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(sums.data(), d_s, rows * sizeof(float), cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += std::fabs(y[i] - (2.0f * x[i] + 0.5f)) > 1e-5f;
    for (int r = 0; r < rows; ++r) {
        double want = 0.0;
        for (int c = 0; c < cols; ++c) want += m[r * cols + c];
        bad += std::fabs(sums[r] - want) > 1e-2;
    }
    cudaFree(d_x);
    cudaFree(d_y);
    cudaFree(d_m);
    cudaFree(d_s);
    cudaStreamDestroy(stream);
    std::printf("%s torch_ext_setup mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", bad);
    return bad == 0 ? 0 : 1;
}
