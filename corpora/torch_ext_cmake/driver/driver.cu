// driver.cu -- runs clamp_kernel.cu without PyTorch and checks values and the change count.
#include <cstdio>
#include <vector>

#include "../csrc/clamp_kernel.cuh"

int main()
{
    const int n = 30001;
    std::vector<float> x(n);
    unsigned int want_changed = 0;
    for (int i = 0; i < n; ++i) {
        x[i] = -3.0f + 6.0f * static_cast<float>(i) / static_cast<float>(n - 1);
        want_changed += (x[i] < -1.0f || x[i] > 1.0f) ? 1u : 0u;
    }
    float* d_x;
    unsigned int* d_changed;
    unsigned int changed = 0;
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_changed, sizeof(unsigned int));
    cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(d_changed, 0, sizeof(unsigned int));
    cudaError_t err = launch_clamp(d_x, n, -1.0f, 1.0f, d_changed, 0);
    if (err == cudaSuccess) err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
        std::printf("FAIL torch_ext_cmake: %s\n", cudaGetErrorString(err));
        return 1;
    }
    std::vector<float> y(n);
    cudaMemcpy(y.data(), d_x, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemcpy(&changed, d_changed, sizeof(unsigned int), cudaMemcpyDeviceToHost);
    int bad = changed != want_changed;
    for (int i = 0; i < n; ++i) {
        const float want = x[i] < -1.0f ? -1.0f : (x[i] > 1.0f ? 1.0f : x[i]);
        bad += y[i] != want;
    }
    cudaFree(d_x);
    cudaFree(d_changed);
    std::printf("%s torch_ext_cmake changed=%u mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", changed, bad);
    return bad == 0 ? 0 : 1;
}
