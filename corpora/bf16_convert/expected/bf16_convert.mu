// bf16_convert: float -> __nv_bfloat16 conversion with round-to-nearest-even and with
// truncation, checked bit for bit against a CPU implementation, and bfloat16 add/multiply on
// operands whose exact results fit in a float (so the only rounding is the final one).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <musa_bf16.h>

#include "cuda_check.muh"

__global__ void convert(const float* in, unsigned short* rn_bits, unsigned short* rz_bits, float* back, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const __mt_bfloat16 rn = __float2bfloat16(in[i]);
        rn_bits[i] = __bfloat16_as_ushort(rn);
        rz_bits[i] = __bfloat16_as_ushort(__float2bfloat16_rz(in[i]));
        back[i] = __bfloat162float(rn);
    }
}

__global__ void arithmetic(const float* x, const float* y, unsigned short* sum_bits, unsigned short* prod_bits,
                           float* pair_sum, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const __mt_bfloat16 a = __float2bfloat16(x[i]);
        const __mt_bfloat16 b = __float2bfloat16(y[i]);
        sum_bits[i] = __bfloat16_as_ushort(__hadd(a, b));
        prod_bits[i] = __bfloat16_as_ushort(__hmul(a, b));
        const __mt_bfloat162 p = __floats2bfloat162_rn(x[i], y[i]);
        pair_sum[i] = __low2float(p) + __high2float(p);
    }
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, sizeof(u));
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, sizeof(f));
    return f;
}

// Finite inputs only: add half an ulp of bfloat16, plus one if that ulp is odd, and truncate.
static unsigned short bf16_rne(float f)
{
    const uint32_t u = float_bits(f);
    return static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static unsigned short bf16_rz(float f) { return static_cast<unsigned short>(float_bits(f) >> 16); }
static float bf16_value(unsigned short bits) { return bits_float(static_cast<uint32_t>(bits) << 16); }

int main()
{
    const int n = 16384;
    std::vector<float> in(n), x(n), y(n);
    uint32_t state = 2024u;
    for (int i = 0; i < n; ++i) {
        state = state * 1103515245u + 12345u;
        in[i] = (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 1000.0f;  // assorted mantissas
        if (i % 97 == 0) in[i] = bits_float(0x3f808000u | ((i & 1u) << 16));  // exact ties, both parities
        state = state * 1103515245u + 12345u;
        x[i] = bf16_value(bf16_rne(1.0f + static_cast<float>(state >> 20) / 4096.0f));
        y[i] = bf16_value(bf16_rne(1.0f + static_cast<float>(i % 1000) / 1000.0f));
    }

    float *d_in, *d_back, *d_x, *d_y, *d_pair;
    unsigned short *d_rn, *d_rz, *d_sum, *d_prod;
    CUDA_CHECK(musaMalloc(&d_in, n * sizeof(float)));
    CUDA_CHECK(musaMalloc(&d_back, n * sizeof(float)));
    CUDA_CHECK(musaMalloc(&d_x, n * sizeof(float)));
    CUDA_CHECK(musaMalloc(&d_y, n * sizeof(float)));
    CUDA_CHECK(musaMalloc(&d_pair, n * sizeof(float)));
    CUDA_CHECK(musaMalloc(&d_rn, n * sizeof(unsigned short)));
    CUDA_CHECK(musaMalloc(&d_rz, n * sizeof(unsigned short)));
    CUDA_CHECK(musaMalloc(&d_sum, n * sizeof(unsigned short)));
    CUDA_CHECK(musaMalloc(&d_prod, n * sizeof(unsigned short)));
    CUDA_CHECK(musaMemcpy(d_in, in.data(), n * sizeof(float), musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemcpy(d_x, x.data(), n * sizeof(float), musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemcpy(d_y, y.data(), n * sizeof(float), musaMemcpyHostToDevice));
    convert<<<n / 256, 256>>>(d_in, d_rn, d_rz, d_back, n);
    CUDA_CHECK_KERNEL();
    arithmetic<<<n / 256, 256>>>(d_x, d_y, d_sum, d_prod, d_pair, n);
    CUDA_CHECK_KERNEL();

    std::vector<unsigned short> rn(n), rz(n), sum(n), prod(n);
    std::vector<float> back(n), pair(n);
    CUDA_CHECK(musaMemcpy(rn.data(), d_rn, n * sizeof(unsigned short), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(rz.data(), d_rz, n * sizeof(unsigned short), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(sum.data(), d_sum, n * sizeof(unsigned short), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(prod.data(), d_prod, n * sizeof(unsigned short), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(back.data(), d_back, n * sizeof(float), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(pair.data(), d_pair, n * sizeof(float), musaMemcpyDeviceToHost));

    int bad = 0;
    for (int i = 0; i < n; ++i) {
        bad += rn[i] != bf16_rne(in[i]) ? 1 : 0;
        bad += rz[i] != bf16_rz(in[i]) ? 1 : 0;
        bad += back[i] != bf16_value(bf16_rne(in[i])) ? 1 : 0;
        // x and y have 8 significant bits each and similar magnitudes: x + y and x * y are exact
        // in float, so rounding them once to bfloat16 is the right answer.
        bad += sum[i] != bf16_rne(x[i] + y[i]) ? 1 : 0;
        bad += prod[i] != bf16_rne(x[i] * y[i]) ? 1 : 0;
        bad += pair[i] != x[i] + y[i] ? 1 : 0;
    }
    musaFree(d_in), musaFree(d_back), musaFree(d_x), musaFree(d_y), musaFree(d_pair);
    musaFree(d_rn), musaFree(d_rz), musaFree(d_sum), musaFree(d_prod);
    CUDA_CHECK(musaGetLastError());
    std::printf("%s bf16_convert n=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, bad);
    return bad == 0 ? 0 : 1;
}
