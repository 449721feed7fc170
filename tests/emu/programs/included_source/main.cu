#include <cstdio>
#include "kernels.cu"
int main() {
    const int n = 100;
    float* v;
    cudaMallocManaged(&v, n * sizeof(float));
    for (int i = 0; i < n; ++i) v[i] = i;
    scale<<<1, 128>>>(v, 3.0f, n);
    cudaDeviceSynchronize();
    for (int i = 0; i < n; ++i)
        if (v[i] != expected(i)) { std::printf("FAIL at %d\n", i); return 1; }
    std::printf("PASS\n");
}
