// intrinsics: integer bit intrinsics checked exactly against portable CPU versions; fast-math
// intrinsics checked within their documented error; float4 loads and stores via make_float4.
#include <cmath>
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

__global__ void bit_ops(const unsigned int* __restrict__ in, int* popc, int* clz, int* ffs, unsigned int* brev, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const unsigned int v = __ldg(&in[i]);  // read-only data path
        popc[i] = __popc(v);
        clz[i] = __clz(static_cast<int>(v));
        ffs[i] = __ffs(static_cast<int>(v));
        brev[i] = __brev(v);
    }
}

__global__ void fast_math(const float4* __restrict__ in, float4* out, int n4)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        const float4 v = in[i];
        out[i] = make_float4(__expf(v.x), rsqrtf(v.y), __fdividef(v.z, v.w), v.x + v.y + v.z + v.w);
    }
}

static int popc_ref(unsigned int v) { int c = 0; for (; v; v &= v - 1) ++c; return c; }
static int clz_ref(unsigned int v) { int c = 0; for (unsigned int m = 0x80000000u; m && !(v & m); m >>= 1) ++c; return c; }
static int ffs_ref(unsigned int v) { if (!v) return 0; int p = 1; while (!(v & 1u)) { v >>= 1; ++p; } return p; }
static unsigned int brev_ref(unsigned int v) { unsigned int r = 0; for (int b = 0; b < 32; ++b) r |= ((v >> b) & 1u) << (31 - b); return r; }

static bool near_rel(float got, double want, double rel)
{
    return std::fabs(got - want) <= rel * std::fabs(want) + 1e-30;
}

int main()
{
    const int n = 4096;
    std::vector<unsigned int> in(n);
    unsigned int state = 99u;
    for (int i = 0; i < n; ++i) {
        state = state * 747796405u + 2891336453u;
        in[i] = i % 64 == 0 ? 0u : (state >> (i % 29));  // zeros and varied leading-zero counts
    }
    unsigned int *d_in, *d_brev;
    int *d_popc, *d_clz, *d_ffs;
    CUDA_CHECK(musaMalloc(&d_in, n * sizeof(unsigned int)));
    CUDA_CHECK(musaMalloc(&d_brev, n * sizeof(unsigned int)));
    CUDA_CHECK(musaMalloc(&d_popc, n * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_clz, n * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_ffs, n * sizeof(int)));
    CUDA_CHECK(musaMemcpy(d_in, in.data(), n * sizeof(unsigned int), musaMemcpyHostToDevice));
    bit_ops<<<n / 256, 256>>>(d_in, d_popc, d_clz, d_ffs, d_brev, n);
    CUDA_CHECK_KERNEL();
    std::vector<int> popc(n), clz(n), ffs(n);
    std::vector<unsigned int> brev(n);
    CUDA_CHECK(musaMemcpy(popc.data(), d_popc, n * sizeof(int), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(clz.data(), d_clz, n * sizeof(int), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(ffs.data(), d_ffs, n * sizeof(int), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaMemcpy(brev.data(), d_brev, n * sizeof(unsigned int), musaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        bad += popc[i] != popc_ref(in[i]) ? 1 : 0;
        bad += clz[i] != clz_ref(in[i]) ? 1 : 0;
        bad += ffs[i] != ffs_ref(in[i]) ? 1 : 0;
        bad += brev[i] != brev_ref(in[i]) ? 1 : 0;
    }

    const int n4 = 1024;
    std::vector<float4> v(n4), r(n4);
    for (int i = 0; i < n4; ++i) {
        v[i] = make_float4(static_cast<float>(i % 40) / 8.0f - 2.5f, 0.25f + static_cast<float>(i % 97),
                           static_cast<float>(i % 13) - 6.0f, 1.5f + static_cast<float>(i % 11));
    }
    float4 *d_v, *d_r;
    CUDA_CHECK(musaMalloc(&d_v, n4 * sizeof(float4)));
    CUDA_CHECK(musaMalloc(&d_r, n4 * sizeof(float4)));
    CUDA_CHECK(musaMemcpy(d_v, v.data(), n4 * sizeof(float4), musaMemcpyHostToDevice));
    fast_math<<<n4 / 128, 128>>>(d_v, d_r, n4);
    CUDA_CHECK_KERNEL();
    CUDA_CHECK(musaMemcpy(r.data(), d_r, n4 * sizeof(float4), musaMemcpyDeviceToHost));
    for (int i = 0; i < n4; ++i) {
        const float4 a = v[i];
        // __expf: a few ulp near 0, more for larger |x| -- 1e-4 relative covers |x| <= 2.5.
        bad += near_rel(r[i].x, std::exp(static_cast<double>(a.x)), 1e-4) ? 0 : 1;
        bad += near_rel(r[i].y, 1.0 / std::sqrt(static_cast<double>(a.y)), 1e-5) ? 0 : 1;
        bad += near_rel(r[i].z, static_cast<double>(a.z) / a.w, 1e-5) ? 0 : 1;
        bad += r[i].w != a.x + a.y + a.z + a.w ? 1 : 0;
    }
    musaFree(d_in), musaFree(d_brev), musaFree(d_popc), musaFree(d_clz), musaFree(d_ffs);
    musaFree(d_v), musaFree(d_r);
    CUDA_CHECK(musaGetLastError());
    std::printf("%s intrinsics n=%d n4=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, n4, bad);
    return bad == 0 ? 0 : 1;
}
