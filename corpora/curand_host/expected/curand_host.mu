// curand_host: the host-side cuRAND API fills device buffers with uniform and with normal
// numbers; the program copies them back and checks range, mean and variance.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <murand.h>

#include "cuda_check.muh"

#define CURAND_CHECK(call)                                                                  \
    do {                                                                                    \
        const murandStatus_t st = (call);                                                   \
        if (st != MURAND_STATUS_SUCCESS) {                                                  \
            std::printf("FAIL curand_host: %s returned status %d\n", #call, static_cast<int>(st)); \
            std::exit(1);                                                                   \
        }                                                                                   \
    } while (0)

static void moments(const std::vector<float>& v, double& mean, double& var)
{
    double s = 0.0, s2 = 0.0;
    for (float f : v) {
        s += f;
        s2 += static_cast<double>(f) * f;
    }
    mean = s / v.size();
    var = s2 / v.size() - mean * mean;
}

int main()
{
    const size_t n = 1 << 18;  // even, as curandGenerateNormal requires
    float* d_buf = nullptr;
    CUDA_CHECK(musaMalloc(&d_buf, n * sizeof(float)));

    murandGenerator_t gen;
    CURAND_CHECK(murandCreateGenerator(&gen, MURAND_RNG_PSEUDO_DEFAULT));
    CURAND_CHECK(murandSetPseudoRandomGeneratorSeed(gen, 20240607ULL));

    std::vector<float> uniform(n), normal(n);
    CURAND_CHECK(murandGenerateUniform(gen, d_buf, n));
    CUDA_CHECK(musaMemcpy(uniform.data(), d_buf, n * sizeof(float), musaMemcpyDeviceToHost));
    CURAND_CHECK(murandGenerateNormal(gen, d_buf, n, 2.0f, 0.5f));
    CUDA_CHECK(musaMemcpy(normal.data(), d_buf, n * sizeof(float), musaMemcpyDeviceToHost));
    CURAND_CHECK(murandDestroyGenerator(gen));
    CUDA_CHECK(musaFree(d_buf));

    int out_of_range = 0;
    for (float f : uniform) out_of_range += (f > 0.0f && f <= 1.0f) ? 0 : 1;
    double u_mean, u_var, g_mean, g_var;
    moments(uniform, u_mean, u_var);
    moments(normal, g_mean, g_var);
    // Tolerances are several standard errors wide for 262,144 samples.
    const bool ok = out_of_range == 0 && std::fabs(u_mean - 0.5) < 0.005 && std::fabs(u_var - 1.0 / 12) < 0.002 &&
                    std::fabs(g_mean - 2.0) < 0.01 && std::fabs(g_var - 0.25) < 0.01;
    std::printf("%s curand_host n=%zu uniform_mean=%.4f normal_mean=%.4f normal_var=%.4f\n", ok ? "PASS" : "FAIL", n,
                u_mean, g_mean, g_var);
    return ok ? 0 : 1;
}
