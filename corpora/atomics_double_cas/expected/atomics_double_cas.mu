// atomics_double_cas: many threads accumulate into a few double counters and track the largest
// float seen. Native double atomicAdd exists from compute capability 6.0; older targets (and
// any compiler that does not define the arch macro that way) take an atomicCAS loop instead,
// which gives the same result. The float maximum is always a custom atomicCAS loop.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

__device__ double add_double(double* address, double value)
{
#if defined(__MUSA_ARCH__) && __MUSA_ARCH__ >= 210
    return atomicAdd(address, value);
#else
    unsigned long long int* bits = reinterpret_cast<unsigned long long int*>(address);
    unsigned long long int old = *bits, assumed;
    do {
        assumed = old;
        old = atomicCAS(bits, assumed, __double_as_longlong(__longlong_as_double(assumed) + value));
    } while (assumed != old);
    return __longlong_as_double(old);
#endif
}

// atomicMax for floats through their bit patterns: retry until no other thread got in between.
__device__ float atomic_max_float(float* address, float value)
{
    int* bits = reinterpret_cast<int*>(address);
    int old = *bits;
    while (__int_as_float(old) < value) {
        const int assumed = old;
        old = atomicCAS(bits, assumed, __float_as_int(value));
        if (old == assumed) break;
    }
    return __int_as_float(old);
}

__global__ void accumulate(const double* values, int n, double* sums, float* max_out)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        add_double(&sums[i % 4], values[i]);
        atomic_max_float(max_out, static_cast<float>(values[i]));
    }
}

int main()
{
    const int n = 100000;
    std::vector<double> values(n);
    double want[4] = {0.0, 0.0, 0.0, 0.0};
    float want_max = -1.0e30f;
    for (int i = 0; i < n; ++i) {
        values[i] = static_cast<double>((i * 7919) % 2001 - 1000) * 0.125;  // eighths: sums exact in any order
        want[i % 4] += values[i];
        if (static_cast<float>(values[i]) > want_max) want_max = static_cast<float>(values[i]);
    }
    double* d_values = nullptr;
    double* d_sums = nullptr;
    float* d_max = nullptr;
    const float start = -1.0e30f;
    CUDA_CHECK(musaMalloc(&d_values, n * sizeof(double)));
    CUDA_CHECK(musaMalloc(&d_sums, 4 * sizeof(double)));
    CUDA_CHECK(musaMalloc(&d_max, sizeof(float)));
    CUDA_CHECK(musaMemcpy(d_values, values.data(), n * sizeof(double), musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemset(d_sums, 0, 4 * sizeof(double)));
    CUDA_CHECK(musaMemcpy(d_max, &start, sizeof(float), musaMemcpyHostToDevice));
    accumulate<<<64, 256>>>(d_values, n, d_sums, d_max);
    CUDA_CHECK_KERNEL();
    double sums[4];
    float got_max = 0.0f;
    CUDA_CHECK(musaMemcpy(sums, d_sums, sizeof(sums), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(&got_max, d_max, sizeof(float), musaMemcpyDeviceToHost));
    int bad = got_max != want_max ? 1 : 0;
    for (int k = 0; k < 4; ++k) bad += sums[k] != want[k] ? 1 : 0;
    CUDA_CHECK(musaFree(d_values));
    CUDA_CHECK(musaFree(d_sums));
    CUDA_CHECK(musaFree(d_max));
    std::printf("%s atomics_double_cas n=%d max=%g mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, got_max, bad);
    return bad == 0 ? 0 : 1;
}
