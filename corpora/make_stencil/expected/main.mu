// main.cu -- runs the stencil on 100000 points and compares with the CPU.
#include <cmath>
#include <cstdio>
#include <vector>

#include "stencil.muh"

int main()
{
    const int n = 100000;
    std::vector<float> in(n), out(n);
    for (int i = 0; i < n; ++i) in[i] = std::sin(0.001f * static_cast<float>(i));
    float *d_in, *d_out;
    musaMalloc(&d_in, n * sizeof(float));
    musaMalloc(&d_out, n * sizeof(float));
    musaMemcpy(d_in, in.data(), n * sizeof(float), musaMemcpyHostToDevice);
    musaError_t err = stencil3(d_in, d_out, n, 0.25f, 0.5f, 0.25f);
    if (err == musaSuccess) err = musaMemcpy(out.data(), d_out, n * sizeof(float), musaMemcpyDeviceToHost);
    if (err != musaSuccess) {
        std::printf("FAIL make_stencil: %s\n", musaGetErrorString(err));
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const float left = i > 0 ? in[i - 1] : 0.0f, right = i + 1 < n ? in[i + 1] : 0.0f;
        bad += std::fabs(out[i] - (0.25f * left + 0.5f * in[i] + 0.25f * right)) > 1e-5f;
    }
    musaFree(d_in);
    musaFree(d_out);
    std::printf("%s make_stencil n=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, bad);
    return bad == 0 ? 0 : 1;
}
