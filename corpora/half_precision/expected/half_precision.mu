// half_precision: scalar __half arithmetic (__hadd, __hmul, __hfma, __hsub), packed __half2
// arithmetic (__hadd2, __hmul2) and conversions both ways. Inputs are quarters between -8 and 8,
// so every result is exact in half precision and the CPU reference is computed in float.
#include <cstdio>
#include <vector>

#include <musa_fp16.h>

#include "cuda_check.muh"

// a * b + a: native half arithmetic where the architecture has it, float arithmetic otherwise.
// Both give the same bits here because every intermediate is exact.
__device__ __half mul_add_self(__half a, __half b)
{
#if defined(__MUSA_ARCH__) && __MUSA_ARCH__ >= 210
    return __hfma(a, b, a);
#else
    return __float2half(__half2float(a) * __half2float(b) + __half2float(a));
#endif
}

__global__ void scalar_ops(const __half* a, const __half* b, __half* sum, __half* prod, __half* fma_out,
                           float* diff, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        sum[i] = __hadd(a[i], b[i]);
        prod[i] = __hmul(a[i], b[i]);
        fma_out[i] = mul_add_self(a[i], b[i]);
        diff[i] = __half2float(__hsub(a[i], b[i]));
    }
}

// Pairs (x[2k], x[2k+1]) as one __half2: packed add and multiply.
__global__ void packed_ops(const float* x, const float* y, float* out_sum, float* out_prod, int pairs)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < pairs) {
        const __half2 hx = __floats2half2_rn(x[2 * k], x[2 * k + 1]);
        const __half2 hy = __halves2half2(__float2half(y[2 * k]), __float2half(y[2 * k + 1]));
        const __half2 s = __hadd2(hx, hy);
        const __half2 p = __hmul2(hx, hy);
        out_sum[2 * k] = __low2float(s);
        out_sum[2 * k + 1] = __high2float(s);
        out_prod[2 * k] = __low2float(p);
        out_prod[2 * k + 1] = __high2float(p);
    }
}

int main()
{
    const int n = 8192;
    std::vector<float> fa(n), fb(n);
    std::vector<__half> a(n), b(n);
    for (int i = 0; i < n; ++i) {
        fa[i] = static_cast<float>(i % 64 - 32) * 0.25f;
        fb[i] = static_cast<float>((i * 7) % 64 - 32) * 0.25f;
        a[i] = __float2half(fa[i]);  // host-side conversion from cuda_fp16.h
        b[i] = __float2half(fb[i]);
    }

    __half *d_a, *d_b, *d_sum, *d_prod, *d_fma;
    float *d_diff, *d_fa, *d_fb, *d_psum, *d_pprod;
    CUDA_CHECK(musaMalloc(&d_a, n * sizeof(__half)));
    CUDA_CHECK(musaMalloc(&d_b, n * sizeof(__half)));
    CUDA_CHECK(musaMalloc(&d_sum, n * sizeof(__half)));
    CUDA_CHECK(musaMalloc(&d_prod, n * sizeof(__half)));
    CUDA_CHECK(musaMalloc(&d_fma, n * sizeof(__half)));
    CUDA_CHECK(musaMalloc(&d_diff, n * sizeof(float)));
    CUDA_CHECK(musaMalloc(&d_fa, n * sizeof(float)));
    CUDA_CHECK(musaMalloc(&d_fb, n * sizeof(float)));
    CUDA_CHECK(musaMalloc(&d_psum, n * sizeof(float)));
    CUDA_CHECK(musaMalloc(&d_pprod, n * sizeof(float)));
    CUDA_CHECK(musaMemcpy(d_a, a.data(), n * sizeof(__half), musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemcpy(d_b, b.data(), n * sizeof(__half), musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemcpy(d_fa, fa.data(), n * sizeof(float), musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemcpy(d_fb, fb.data(), n * sizeof(float), musaMemcpyHostToDevice));

    scalar_ops<<<n / 128, 128>>>(d_a, d_b, d_sum, d_prod, d_fma, d_diff, n);
    CUDA_CHECK_KERNEL();
    packed_ops<<<n / 2 / 128, 128>>>(d_fa, d_fb, d_psum, d_pprod, n / 2);
    CUDA_CHECK_KERNEL();

    std::vector<__half> sum(n), prod(n), fma_out(n);
    std::vector<float> diff(n), psum(n), pprod(n);
    CUDA_CHECK(musaMemcpy(sum.data(), d_sum, n * sizeof(__half), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(prod.data(), d_prod, n * sizeof(__half), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(fma_out.data(), d_fma, n * sizeof(__half), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(diff.data(), d_diff, n * sizeof(float), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(psum.data(), d_psum, n * sizeof(float), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(pprod.data(), d_pprod, n * sizeof(float), musaMemcpyDeviceToHost));

    int bad = 0;
    for (int i = 0; i < n; ++i) {
        bad += __half2float(sum[i]) != fa[i] + fb[i] ? 1 : 0;
        bad += __half2float(prod[i]) != fa[i] * fb[i] ? 1 : 0;
        bad += __half2float(fma_out[i]) != fa[i] * fb[i] + fa[i] ? 1 : 0;
        bad += diff[i] != fa[i] - fb[i] ? 1 : 0;
        bad += psum[i] != fa[i] + fb[i] ? 1 : 0;
        bad += pprod[i] != fa[i] * fb[i] ? 1 : 0;
    }
    musaFree(d_a), musaFree(d_b), musaFree(d_sum), musaFree(d_prod), musaFree(d_fma);
    musaFree(d_diff), musaFree(d_fa), musaFree(d_fb), musaFree(d_psum), musaFree(d_pprod);
    CUDA_CHECK(musaGetLastError());
    std::printf("%s half_precision n=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, bad);
    return bad == 0 ? 0 : 1;
}
