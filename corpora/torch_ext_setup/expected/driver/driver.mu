// driver.cu -- runs the fused_ops kernels without PyTorch: random inputs, the launchers of
// csrc/kernels.cu, a CPU reference, one PASS/FAIL line.
#include <cmath>
#include <cstdio>
#include <vector>

#include "../csrc/kernels.muh"

int main()
{
    const int n = 10000, rows = 48, cols = 700;
    std::vector<float> x(n), y(n), m(rows * cols), sums(rows);
    for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 97) * 0.25f - 12.0f;
    for (int i = 0; i < rows * cols; ++i) m[i] = static_cast<float>((i * 7) % 31) - 15.0f;

    float *d_x = nullptr, *d_y = nullptr, *d_m = nullptr, *d_s = nullptr;
    musaStream_t stream;
    musaStreamCreate(&stream);
    musaMalloc(&d_x, n * sizeof(float));
    musaMalloc(&d_y, n * sizeof(float));
    musaMalloc(&d_m, rows * cols * sizeof(float));
    musaMalloc(&d_s, rows * sizeof(float));
    musaMemcpy(d_x, x.data(), n * sizeof(float), musaMemcpyHostToDevice);
    musaMemcpy(d_m, m.data(), rows * cols * sizeof(float), musaMemcpyHostToDevice);
    musaError_t err = launch_scale_add(d_x, d_y, 2.0f, 0.5f, n, stream);
    if (err == musaSuccess) err = launch_row_sum(d_m, d_s, rows, cols, stream);
    if (err == musaSuccess) err = musaStreamSynchronize(stream);
    if (err != musaSuccess) {
        std::printf("FAIL torch_ext_setup: %s\n", musaGetErrorString(err));
        return 1;
    }
    musaMemcpy(y.data(), d_y, n * sizeof(float), musaMemcpyDeviceToHost);
    musaMemcpy(sums.data(), d_s, rows * sizeof(float), musaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += std::fabs(y[i] - (2.0f * x[i] + 0.5f)) > 1e-5f;
    for (int r = 0; r < rows; ++r) {
        double want = 0.0;
        for (int c = 0; c < cols; ++c) want += m[r * cols + c];
        bad += std::fabs(sums[r] - want) > 1e-2;
    }
    musaFree(d_x);
    musaFree(d_y);
    musaFree(d_m);
    musaFree(d_s);
    musaStreamDestroy(stream);
    std::printf("%s torch_ext_setup mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", bad);
    return bad == 0 ? 0 : 1;
}
