// main.cu -- runs the stencil on 100000 points and compares with the CPU.
#include <cmath>
#include <cstdio>
#include <vector>

#include "stencil.cuh"

int main()
{
    const int n = 100000;
    std::vector<float> in(n), out(n);
    for (int i = 0; i < n; ++i) in[i] = std::sin(0.001f * static_cast<float>(i));
    float *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, n * sizeof(float));
    cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaError_t err = stencil3(d_in, d_out, n, 0.25f, 0.5f, 0.25f);
    if (err == cudaSuccess) err = cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost);
    if (err != cudaSuccess) {
        std::printf("FAIL make_stencil: %s\n", cudaGetErrorString(err));
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        const float left = i > 0 ? in[i - 1] : 0.0f, right = i + 1 < n ? in[i + 1] : 0.0f;
        bad += std::fabs(out[i] - (0.25f * left + 0.5f * in[i] + 0.25f * right)) > 1e-5f;
    }
    cudaFree(d_in);
    cudaFree(d_out);
    std::printf("%s make_stencil n=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, bad);
    return bad == 0 ? 0 : 1;
}
