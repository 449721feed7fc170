// driver.cu -- runs clamp_kernel.cu without PyTorch and checks values and the change count.
#include <cstdio>
#include <vector>

#include "../csrc/clamp_kernel.muh"

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
    musaMalloc(&d_x, n * sizeof(float));
    musaMalloc(&d_changed, sizeof(unsigned int));
    musaMemcpy(d_x, x.data(), n * sizeof(float), musaMemcpyHostToDevice);
    musaMemset(d_changed, 0, sizeof(unsigned int));
    musaError_t err = launch_clamp(d_x, n, -1.0f, 1.0f, d_changed, 0);
    if (err == musaSuccess) err = musaDeviceSynchronize();
    if (err != musaSuccess) {
        std::printf("FAIL torch_ext_cmake: %s\n", musaGetErrorString(err));
        return 1;
    }
    std::vector<float> y(n);
    musaMemcpy(y.data(), d_x, n * sizeof(float), musaMemcpyDeviceToHost);
    musaMemcpy(&changed, d_changed, sizeof(unsigned int), musaMemcpyDeviceToHost);
    int bad = changed != want_changed;
    for (int i = 0; i < n; ++i) {
        const float want = x[i] < -1.0f ? -1.0f : (x[i] > 1.0f ? 1.0f : x[i]);
        bad += y[i] != want;
    }
    musaFree(d_x);
    musaFree(d_changed);
    std::printf("%s torch_ext_cmake changed=%u mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", changed, bad);
    return bad == 0 ? 0 : 1;
}
