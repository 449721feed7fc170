// main.cu -- checks the saxpy library against a CPU reference.
#include <cmath>
#include <cstdio>
#include <vector>

#include "saxpy.muh"

int main()
{
    const int n = 50000;
    std::vector<float> x(n), y(n), want(n);
    double want_dot = 0.0;
    for (int i = 0; i < n; ++i) {
        x[i] = static_cast<float>(i % 13) * 0.5f;
        y[i] = static_cast<float>(i % 7) - 3.0f;
        want[i] = 3.0f * x[i] + y[i];
        want_dot += static_cast<double>(x[i]) * want[i];
    }
    float *d_x, *d_y, *d_dot;
    musaMalloc(&d_x, n * sizeof(float));
    musaMalloc(&d_y, n * sizeof(float));
    musaMalloc(&d_dot, sizeof(float));
    musaMemcpy(d_x, x.data(), n * sizeof(float), musaMemcpyHostToDevice);
    musaMemcpy(d_y, y.data(), n * sizeof(float), musaMemcpyHostToDevice);
    musaError_t err = saxpy(n, 3.0f, d_x, d_y);
    if (err == musaSuccess) err = dot(n, d_x, d_y, d_dot);
    if (err == musaSuccess) err = musaDeviceSynchronize();
    if (err != musaSuccess) {
        std::printf("FAIL cmake_modern: %s\n", musaGetErrorString(err));
        return 1;
    }
    float got_dot = 0.0f;
    musaMemcpy(y.data(), d_y, n * sizeof(float), musaMemcpyDeviceToHost);
    musaMemcpy(&got_dot, d_dot, sizeof(float), musaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += std::fabs(y[i] - want[i]) > 1e-5f;
    bad += std::fabs(got_dot - want_dot) > 1e-3 * std::fabs(want_dot);
    musaFree(d_x);
    musaFree(d_y);
    musaFree(d_dot);
    std::printf("%s cmake_modern mismatches=%d dot=%g\n", bad == 0 ? "PASS" : "FAIL", bad, got_dot);
    return bad == 0 ? 0 : 1;
}
