// curand_device_pi: estimate pi by throwing points into the unit square, once with the default
// XORWOW generator (curandState) and once with Philox (curandStatePhilox4_32_10_t). Each thread
// owns one state initialised with curand_init(seed, its index, 0). Device-side cuRAND needs no
// library at link time.
#include <cmath>
#include <cstdio>
#include <vector>

#include <murand_kernel.h>

#include "cuda_check.muh"

template <typename State>
__global__ void count_inside(unsigned long long seed, int samples_per_thread, unsigned int* inside)
{
    const int id = blockIdx.x * blockDim.x + threadIdx.x;
    State state;
    murand_init(seed, id, 0, &state);
    unsigned int hits = 0;
    for (int s = 0; s < samples_per_thread; ++s) {
        const float x = murand_uniform(&state);  // in (0, 1]
        const float y = murand_uniform(&state);
        hits += (x * x + y * y <= 1.0f) ? 1u : 0u;
    }
    inside[id] = hits;
}

template <typename State>
static double estimate_pi(int blocks, int threads, int samples_per_thread)
{
    const int total_threads = blocks * threads;
    unsigned int* d_inside = nullptr;
    CUDA_CHECK(musaMalloc(&d_inside, total_threads * sizeof(unsigned int)));
    count_inside<State><<<blocks, threads>>>(1234ULL, samples_per_thread, d_inside);
    CUDA_CHECK_KERNEL();
    std::vector<unsigned int> inside(total_threads);
    CUDA_CHECK(musaMemcpy(inside.data(), d_inside, total_threads * sizeof(unsigned int), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaFree(d_inside));
    unsigned long long hits = 0;
    for (unsigned int h : inside) hits += h;
    return 4.0 * static_cast<double>(hits) / (static_cast<double>(total_threads) * samples_per_thread);
}

int main()
{
    const int blocks = 32, threads = 128, samples = 64;  // 262,144 points per generator
    const double pi_xorwow = estimate_pi<murandState>(blocks, threads, samples);
    const double pi_philox = estimate_pi<murand_state_philox4x32_10>(blocks, threads, samples);
    const double pi = 3.14159265358979;
    // The standard error with 262,144 points is about 0.0032; 0.02 is more than six of them.
    const bool ok = std::fabs(pi_xorwow - pi) < 0.02 && std::fabs(pi_philox - pi) < 0.02 && pi_xorwow != pi_philox;
    std::printf("%s curand_device_pi xorwow=%.4f philox=%.4f\n", ok ? "PASS" : "FAIL", pi_xorwow, pi_philox);
    return ok ? 0 : 1;
}
