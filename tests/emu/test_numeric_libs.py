"""The emulator's numeric libraries (half, bf16, math, vector, cuRAND, cuBLAS) checked from host code.

Each test compiles one C++ program against a face of shims/emu with g++ and runs it; the program checks
known values (IEEE rounding edge cases, Philox4x32-10 known-answer vectors, skip-ahead identities,
distribution moments, BLAS against naive loops) and prints every failed check with its line.  The MUSA
face gets the same program with MUSA names, which also proves the face declares them.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHIMS = ROOT / "shims" / "emu"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not installed")

PRELUDE = r"""
#include <cstdio>
#include <cstring>
#include <cmath>
#include <cstdint>
static int failures = 0;
#define CHECK(cond) do { if (!(cond)) { ++failures; std::printf("FAIL line %d: %s\n", __LINE__, #cond); } } while (0)
#define NEAR(a, b, tol) CHECK(std::fabs((double)(a) - (double)(b)) <= (tol))
static unsigned bits16(unsigned short v) { return v; }
"""
# CUDA spellings -> MUSA spellings (MUSA_FACTS §1) for turning a CUDA-face test into a MUSA-face test.
TO_MUSA = [
    (r"<cuda_fp16\.h>", "<musa_fp16.h>"),
    (r"<cuda_bf16\.h>", "<musa_bf16.h>"),
    (r"<curand_kernel\.h>", "<murand_kernel.h>"),
    (r"<curand\.h>", "<murand.h>"),
    (r"<cublas_v2\.h>", "<mublas.h>"),
    (r"\bcurand", "murand"),
    (r"\bCURAND_", "MURAND_"),
    (r"\bcublas", "mublas"),
    (r"\bCUBLAS_STATUS_NOT_INITIALIZED\b", "MUBLAS_STATUS_INVALID_HANDLE"),  # muBLAS's spelling (rules/cublas)
    (r"\bCUBLAS_", "MUBLAS_"),
    (r"\b__nv_bfloat16", "__mt_bfloat16"),
]


def to_musa(source: str) -> str:
    for pattern, repl in TO_MUSA:
        source = re.sub(pattern, repl, source)
    return source


def compile_source(source: str, face: str, folder: Path, *, syntax_only: bool = False) -> subprocess.Popen:
    """Start g++ on `source` against one face (the caller waits; two compile at once)."""
    src = folder / f"prog_{face}.cpp"
    src.write_text(source)
    cmd = ["g++", "-std=c++17", "-O1", "-Wall", "-Wno-unused-function", f"-I{SHIMS / face}", str(src)]
    cmd += ["-fsyntax-only"] if syntax_only else ["-o", str(folder / f"prog_{face}")]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def combined_program(sections: dict[str, str]) -> str:
    """One program holding every section, each in a namespace of its own; argv[1] picks the section.

    One build per face instead of one per section: the emulator headers dominate compile time.
    """
    includes, bodies = [], []
    for name, body in sections.items():
        lines = body.splitlines()
        includes += [line for line in lines if line.startswith("#include")]
        kept = "\n".join(line for line in lines if not line.startswith("#include"))
        bodies.append(f"namespace sec_{name} {{\n{kept}\n}}\n")
    dispatch = "".join(f'    if (std::strcmp(argv[1], "{name}") == 0) sec_{name}::run();\n' for name in sections)
    main = ("int main(int argc, char** argv) {\n    if (argc != 2) return 2;\n" + dispatch +
            '    if (failures == 0) std::printf("PASS\\n");\n    return failures != 0;\n}\n')
    return PRELUDE + "\n".join(dict.fromkeys(includes)) + "\n" + "".join(bodies) + main


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> dict[str, Path]:
    """The combined test program of each face, both compiled at once."""
    folder = tmp_path_factory.mktemp("numeric")
    sources = {"cuda": combined_program(SECTIONS), "musa": to_musa(combined_program(MUSA_SECTIONS))}
    procs = {face: compile_source(text, face, folder) for face, text in sources.items()}
    for proc in procs.values():
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-4000:]
    return {face: folder / f"prog_{face}" for face in procs}


def run_section(programs: dict[str, Path], face: str, section: str) -> str:
    ran = subprocess.run([str(programs[face]), section], check=False, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout[-4000:] + ran.stderr[-2000:]
    return ran.stdout


FLOAT16 = r"""
#include <cuda_bf16.h>
static float f32(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
static unsigned hb(__half h) { return bits16(__half_as_ushort(h)); }
static unsigned bb(__nv_bfloat16 h) { return bits16(__bfloat16_as_ushort(h)); }
static void run() {
    // binary16 conversions: round to nearest even, subnormals, overflow, NaN, signed zero
    CHECK(hb(__float2half(1.0f)) == 0x3c00);
    CHECK(hb(__float2half(65504.0f)) == 0x7bff);
    CHECK(hb(__float2half(65519.0f)) == 0x7bff);
    CHECK(hb(__float2half(65520.0f)) == 0x7c00);            // halfway to 2^16 rounds to even: infinity
    CHECK(hb(__float2half_rz(65520.0f)) == 0x7bff);
    CHECK(hb(__float2half(std::ldexp(1.0f, -24))) == 0x0001);
    CHECK(hb(__float2half(std::ldexp(1.0f, -25))) == 0x0000);  // tie between 0 and the smallest subnormal
    CHECK(hb(__float2half(std::ldexp(1.5f, -25))) == 0x0001);
    CHECK(hb(__float2half(1.0f + std::ldexp(1.0f, -11))) == 0x3c00);      // tie, even
    CHECK(hb(__float2half(1.0f + 3 * std::ldexp(1.0f, -11))) == 0x3c02);  // tie, even upward
    CHECK(hb(__float2half(-0.0f)) == 0x8000);
    CHECK(hb(__float2half(f32(0x7fc00001u))) == 0x7fff);
    CHECK(hb(__float2half(INFINITY)) == 0x7c00 && hb(__float2half(-INFINITY)) == 0xfc00);
    CHECK(hb(__float2half_ru(1.0f + std::ldexp(1.0f, -20))) == 0x3c01);
    CHECK(hb(__float2half_rd(-(1.0f + std::ldexp(1.0f, -20)))) == 0xbc01);
    CHECK(hb(__float2half_rd(1.0f + std::ldexp(1.0f, -20))) == 0x3c00);
    // double converts in one rounding: via float this value would become a tie and round down
    CHECK(hb(__double2half(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40))) == 0x3c01);
    CHECK(__half2float(__ushort_as_half(0x0001)) == std::ldexp(1.0f, -24));
    CHECK(__half2float(__ushort_as_half(0x7bff)) == 65504.0f);
    CHECK(std::isnan(__half2float(__ushort_as_half(0x7e00))));
    // arithmetic, fma, comparisons, NaN rules
    __half two = 2.0f, three = 3.0f, one = 1.0f, nan = __ushort_as_half(0x7fff);
    CHECK(__half2float(__hfma(two, three, one)) == 7.0f);
    CHECK(__half2float(__hadd(two, three)) == 5.0f && __half2float(two * three - one) == 5.0f);
    CHECK(__half2float(__hdiv(one, three)) == __half2float(__float2half(1.0f / 3.0f)));
    CHECK(hb(__hmax(nan, two)) == 0x4000 && hb(__hmin(two, nan)) == 0x4000);
    CHECK(__hisnan(__hmax_nan(nan, two)));
    CHECK(!__heq(nan, nan) && __hneu(nan, nan) && !__hne(nan, nan) && __hltu(nan, one));
    CHECK(two > one && one < two && one != two && !(nan == nan));
    CHECK(__hisinf(__float2half(-1e6f)) == -1 && __hisinf(one) == 0);
    CHECK(__half2float(__hadd_sat(two, three)) == 1.0f && __half2float(__hsub_sat(one, three)) == 0.0f);
    CHECK(__half2float(hsqrt(__float2half(4.0f))) == 2.0f && __half2float(hrcp(two)) == 0.5f);
    // integer conversions: rounding mode, saturation, NaN to 0
    CHECK(__half2int_rn(__float2half(2.5f)) == 2 && __half2int_rn(__float2half(3.5f)) == 4);
    CHECK(__half2int_rz(__float2half(-2.75f)) == -2 && __half2int_rd(__float2half(-2.25f)) == -3);
    CHECK(__half2uint_rn(__float2half(-1.0f)) == 0u && __half2int_rn(nan) == 0);
    CHECK(__half2short_rn(__float2half(INFINITY)) == 32767);
    CHECK(hb(__int2half_rn(2049)) == hb(__float2half(2048.0f)) && hb(__int2half_ru(2049)) == hb(__float2half(2050.0f)));
    // pairs
    half2 p = __floats2half2_rn(1.5f, -2.0f), q = __halves2half2(two, three);
    float2 s = __half22float2(__hadd2(p, q));
    CHECK(s.x == 3.5f && s.y == 1.0f);
    CHECK(__heq2_mask(p, __lowhigh2highlow(__lowhigh2highlow(p))) == 0xffffffffu);
    CHECK(__hbgt2(q, p) && __low2float(__hmul2(q, q)) == 4.0f && __high2float(h2exp(__float2half2_rn(0.0f))) == 1.0f);
    CHECK(sizeof(__half2) == 4 && alignof(__half2) == 4);
    __half acc = 0.0f;
    for (int i = 0; i < 8; ++i) atomicAdd(&acc, one);
    CHECK(__half2float(acc) == 8.0f);
    // bfloat16
    CHECK(bb(__float2bfloat16(1.0f)) == 0x3f80);
    CHECK(bb(__float2bfloat16(1.00390625f)) == 0x3f80);  // 1 + 2^-8: tie, even
    CHECK(bb(__float2bfloat16(1.01171875f)) == 0x3f82);  // 1 + 3*2^-8: tie, even upward
    CHECK(bb(__float2bfloat16(3.4e38f)) == 0x7f80 && bb(__float2bfloat16_rz(3.4e38f)) == 0x7f7f);
    CHECK(bb(__float2bfloat16(f32(0xffc00000u))) == 0x7fff);
    CHECK(bb(__float2bfloat16(f32(0x00010000u))) == 0x0001);  // float subnormal stays a bf16 subnormal
    CHECK(__bfloat162float(__ushort_as_bfloat16(0x4049)) == 3.140625f);
    __nv_bfloat16 a = 1.5f, b = 2.0f;
    CHECK(__bfloat162float(__hfma(a, b, a)) == 4.5f && __bfloat162float(a + b) == 3.5f);
    CHECK(__hlt(a, b) && __bfloat162float(__hmax(a, b)) == 2.0f);
    float2 bf = __bfloat1622float2(__floats2bfloat162_rn(0.5f, 8.0f));
    CHECK(bf.x == 0.5f && bf.y == 8.0f);
    CHECK(__bfloat162int_rz(__float2bfloat16(-7.9f)) == -7);
}
"""

MATH_VECTOR = r"""
#include <cuda_fp16.h>
#include <cfloat>
#include <climits>
#include <algorithm>
static_assert(alignof(float4) == 16 && sizeof(float3) == 12 && alignof(float3) == 4, "float vectors");
static_assert(alignof(char2) == 2 && alignof(short4) == 8 && alignof(int2) == 8 && alignof(uint4) == 16, "int vectors");
static_assert(alignof(double2) == 16 && alignof(longlong2) == 16 && alignof(double4_32a) == 32, "wide vectors");
static void run() {
    dim3 d; dim3 e(4, 2); int n = 7; dim3 f{n, 3}; dim3 g(make_uint3(5, 6, 7));
    CHECK(d.x == 1 && d.y == 1 && d.z == 1 && e.x == 4 && e.y == 2 && e.z == 1 && f.x == 7 && g.z == 7);
    uint3 u = g; CHECK(u.y == 6);
    float4 v = make_float4(1, 2, 3, 4); CHECK(v.w == 4.0f);
    // bit operations
    CHECK(__popc(0xF0F0u) == 8 && __popcll(~0ull) == 64);
    CHECK(__clz(0) == 32 && __clz(1) == 31 && __clz(-1) == 0 && __clzll(1) == 63);
    CHECK(__ffs(0) == 0 && __ffs(8) == 4 && __ffsll(1ll << 40) == 41);
    CHECK(__brev(1u) == 0x80000000u && __brev(0x12345678u) == 0x1e6a2c48u && __brevll(1ull) == (1ull << 63));
    CHECK(__funnelshift_l(0x80000000u, 1u, 1) == 3u && __funnelshift_l(0u, 1u, 33) == 2u);
    CHECK(__funnelshift_lc(0x12345678u, 0u, 40) == 0x12345678u);
    CHECK(__funnelshift_r(1u, 1u, 1) == 0x80000000u && __funnelshift_rc(0u, 0xabcdu, 40) == 0xabcdu);
    CHECK(__byte_perm(0x33221100u, 0x77665544u, 0x5140u) == 0x55114400u);
    CHECK(__umulhi(0xffffffffu, 0xffffffffu) == 0xfffffffeu && __mulhi(-1, 1) == -1);
    CHECK(__umul64hi(~0ull, 2ull) == 1ull && __mul24(0x00ffffff, 2) == -2);
    CHECK(__sad(3, 10, 5u) == 12u && __hadd(-3, 0) == -2 && __rhadd(1, 2) == 2 && __uhadd(~0u, ~0u) == ~0u);
    CHECK(__dp4a(0x01020304, 0x01010101, 10) == 20);
    CHECK(__float_as_int(1.0f) == 0x3f800000 && __int_as_float(0x40000000) == 2.0f);
    CHECK(__double2hiint(1.0) == 0x3ff00000 && __double2loint(1.0) == 0 && __hiloint2double(0x3ff00000, 0) == 1.0);
    // directed rounding is exact
    const float tiny = std::ldexp(1.0f, -30);
    CHECK(__fadd_rz(1.0f, tiny) == 1.0f && __fadd_rd(1.0f, tiny) == 1.0f);
    CHECK(__fadd_ru(1.0f, tiny) == std::nextafter(1.0f, 2.0f) && __fsub_rd(1.0f, tiny) == std::nextafter(1.0f, 0.0f));
    CHECK(__fdiv_ru(1.0f, 3.0f) == std::nextafter(__fdiv_rd(1.0f, 3.0f), 1.0f));
    CHECK(__fdiv_rn(1.0f, 3.0f) == 1.0f / 3.0f && __fdiv_rz(1.0f, 3.0f) == __fdiv_rd(1.0f, 3.0f));
    CHECK(__fmul_rz(3.0f, 1.0f / 3.0f) <= 1.0f && __fsqrt_rd(2.0f) < __fsqrt_ru(2.0f));
    CHECK((double)__fsqrt_rd(2.0f) * __fsqrt_rd(2.0f) < 2.0 && (double)__fsqrt_ru(2.0f) * __fsqrt_ru(2.0f) > 2.0);
    CHECK(__fmaf_ru(1.0f, 1.0f, tiny) == std::nextafter(1.0f, 2.0f) && __fmaf_rz(1.0f, 1.0f, -tiny) == std::nextafter(1.0f, 0.0f));
    CHECK(__dadd_ru(1.0, std::ldexp(1.0, -60)) == std::nextafter(1.0, 2.0) && __fma_rd(1.0, 1.0, -std::ldexp(1.0, -60)) < 1.0);
    CHECK(__fadd_rz(FLT_MAX, FLT_MAX) == FLT_MAX && std::isinf(__fadd_rn(FLT_MAX, FLT_MAX)));
    CHECK(__double2float_rd(0.1) < __double2float_ru(0.1) && __double2float_rn(0.1) == 0.1f);
    CHECK(__ll2float_rz(16777217ll) == 16777216.0f && __ll2float_ru(16777217ll) == 16777218.0f);
    CHECK(__float2int_rn(2.5f) == 2 && __float2int_rn(3.5f) == 4 && __float2int_ru(2.1f) == 3 && __float2int_rd(-2.1f) == -3);
    CHECK(__float2int_rz(NAN) == 0 && __float2int_rn(1e10f) == INT_MAX && __float2uint_rn(-5.0f) == 0u);
    // special functions
    CHECK(__fdividef(1.0f, std::ldexp(1.0f, 127)) == 0.0f && __fdividef(6.0f, 3.0f) == 2.0f);
    CHECK(__saturatef(1.5f) == 1.0f && __saturatef(NAN) == 0.0f && __saturatef(0.25f) == 0.25f);
    NEAR(rsqrtf(4.0f), 0.5, 0); NEAR(rcbrt(8.0), 0.5, 1e-15);
    CHECK(sinpif(1.0f) == 0.0f && cospif(0.5f) == 0.0f && sinpi(0.5) == 1.0 && cospi(1.0) == -1.0);
    NEAR(erfinvf(std::erf(0.3f)), 0.3, 2e-7); NEAR(erfinv(std::erf(1.7)), 1.7, 1e-14);
    NEAR(erfcinv(std::erfc(5.0)), 5.0, 1e-12); NEAR(erfcinvf(1.0f), 0.0, 0);
    NEAR(normcdfinvf(0.975f), 1.959963985, 1e-6); NEAR(normcdf(1.0), 0.841344746068543, 1e-15);
    NEAR(erfcx(30.0), 0.018795888861416751, 1e-15); NEAR(erfcx(1.0), std::exp(1.0) * std::erfc(1.0), 1e-15);
    NEAR(norm3df(3, 4, 12), 13, 0); NEAR(rhypot(3.0, 4.0), 0.2, 1e-16);
    float sn, cs; sincospif(0.5f, &sn, &cs); CHECK(sn == 1.0f && cs == 0.0f);
    // min/max: CUDA's overloads (mixed signedness compares as unsigned)
    using namespace std;
    CHECK(min(3, 4) == 3 && max(-1, 1u) == 4294967295u && min(-1, 1u) == 1u && max(2.0f, 3.0f) == 3.0f);
    CHECK(max(1.0f, 2.5) == 2.5 && min(NAN, 1.0f) == 1.0f && ullmax(1ull, 2ull) == 2ull && umin(5u, 2u) == 2u);
    const float arr[2] = {1.5f, 2.5f};
    CHECK(__ldg(&arr[1]) == 2.5f && __ldcs(arr) == 1.5f);
}
"""


RAND = r"""
#include <curand_kernel.h>
#include <vector>
template <class F>
static void moments(F draw, int n, double* mean, double* var) {
    double s = 0, s2 = 0;
    for (int i = 0; i < n; ++i) { const double x = draw(); s += x; s2 += x * x; }
    *mean = s / n; *var = s2 / n - *mean * *mean;
}
static void run() {
    // Philox4x32-10 known-answer vectors (Salmon et al., Random123 kat_vectors)
    uint4 r = emu::rand::philox4x32_10(make_uint4(0, 0, 0, 0), make_uint2(0, 0));
    CHECK(r.x == 0x6627e8d5u && r.y == 0xe169c58du && r.z == 0xbc57ac4cu && r.w == 0x9b00dbd8u);
    r = emu::rand::philox4x32_10(make_uint4(~0u, ~0u, ~0u, ~0u), make_uint2(~0u, ~0u));
    CHECK(r.x == 0x408f276du && r.y == 0x41c83b0eu && r.z == 0xa20bc7c6u && r.w == 0x6d5451fdu);
    r = emu::rand::philox4x32_10(make_uint4(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u),
                                 make_uint2(0xa4093822u, 0x299f31d0u));
    CHECK(r.x == 0xd16cfe09u && r.y == 0x94fdccebu && r.z == 0x5001e420u && r.w == 0x24126ea1u);
    // Philox through the state: seed 0 gives the first vector; skipahead == stepping; curand4 == 4 x curand
    curandStatePhilox4_32_10_t p, q;
    curand_init(0, 0, 0, &p);
    CHECK(curand(&p) == 0x6627e8d5u && curand(&p) == 0xe169c58du);
    for (unsigned n = 0; n < 11; ++n) {
        curand_init(99, 5, 3, &p); curand_init(99, 5, 3, &q);
        for (unsigned i = 0; i < n; ++i) curand(&p);
        skipahead(n, &q);
        CHECK(curand(&p) == curand(&q));
        uint4 four = curand4(&q);
        CHECK(four.x == curand(&p) && four.y == curand(&p) && four.z == curand(&p) && four.w == curand(&p));
    }
    curand_init(7, 1, 0, &p); curand_init(7, 0, 0, &q); skipahead_sequence(1, &q);
    CHECK(curand(&p) == curand(&q) && q.ctr.z == 1u);
    // XORWOW: offset == stepping; a subsequence == 16 skips of 2^63 (2^67 steps); init order independence
    curandState a, b;
    curand_init(1234, 0, 0, &a); curand_init(1234, 0, 12345, &b);
    for (int i = 0; i < 12345; ++i) curand(&a);
    CHECK(curand(&a) == curand(&b));
    curand_init(1234, 3, 77, &a); curand_init(1234, 0, 0, &b);
    for (int i = 0; i < 48; ++i) skipahead(1ull << 63, &b);
    skipahead(77, &b);
    CHECK(curand(&a) == curand(&b) && a.d == b.d);
    curand_init(5, 0, 0, &a); curand_init(5, 1, 0, &b);
    CHECK(curand(&a) != curand(&b));
    // distributions: range and moments
    curand_init(42, 0, 0, &a); curand_init(42, 0, 0, &p);
    double m, v;
    moments([&] { float u = curand_uniform(&a); CHECK(u > 0.0f && u <= 1.0f); return u; }, 200000, &m, &v);
    NEAR(m, 0.5, 0.005); NEAR(v, 1.0 / 12, 0.002);
    moments([&] { return curand_uniform_double(&p); }, 200000, &m, &v); NEAR(m, 0.5, 0.005); NEAR(v, 1.0 / 12, 0.002);
    moments([&] { return curand_normal(&a); }, 200000, &m, &v); NEAR(m, 0.0, 0.01); NEAR(v, 1.0, 0.02);
    moments([&] { return curand_normal(&p); }, 200000, &m, &v); NEAR(m, 0.0, 0.01); NEAR(v, 1.0, 0.02);
    moments([&] { return curand_normal_double(&a); }, 200000, &m, &v); NEAR(m, 0.0, 0.01); NEAR(v, 1.0, 0.02);
    moments([&] { return curand_log_normal(&p, 0.0f, 0.5f); }, 200000, &m, &v); NEAR(m, std::exp(0.125), 0.01);
    moments([&] { return (double)curand_poisson(&a, 4.0); }, 100000, &m, &v); NEAR(m, 4.0, 0.05); NEAR(v, 4.0, 0.15);
    moments([&] { return (double)curand_poisson(&p, 200.0); }, 100000, &m, &v); NEAR(m, 200.0, 0.3); NEAR(v, 200.0, 8.0);
    float4 u4 = curand_uniform4(&p); CHECK(u4.x > 0 && u4.w <= 1.0f);
    // the cached second normal is the pair's second value
    curand_init(9, 0, 0, &a); curand_init(9, 0, 0, &b);
    float2 pair = curand_normal2(&a); float n1 = curand_normal(&b), n2 = curand_normal(&b);
    CHECK(pair.x == n1 && pair.y == n2);
    // host API
    curandGenerator_t g;
    CHECK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_MTGP32) == CURAND_STATUS_TYPE_ERROR);
    CHECK(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT) == CURAND_STATUS_SUCCESS);
    CHECK(curandSetPseudoRandomGeneratorSeed(g, 1234) == CURAND_STATUS_SUCCESS);
    std::vector<unsigned> bits(100), again(50);
    CHECK(curandGenerate(g, bits.data(), 100) == CURAND_STATUS_SUCCESS);
    curandSetPseudoRandomGeneratorSeed(g, 1234);
    curandGenerate(g, again.data(), 50); CHECK(again[49] == bits[49]);
    curandGenerate(g, again.data(), 50); CHECK(again[0] == bits[50]);  // calls continue the stream
    curandSetGeneratorOffset(g, 10); curandGenerate(g, again.data(), 1); CHECK(again[0] == bits[10]);
    std::vector<float> f(1000);
    CHECK(curandGenerateNormal(g, f.data(), 999, 0.0f, 1.0f) == CURAND_STATUS_LENGTH_NOT_MULTIPLE);
    CHECK(curandGenerateNormal(g, f.data(), 1000, 5.0f, 2.0f) == CURAND_STATUS_SUCCESS);
    double s = 0; for (float x : f) s += x; NEAR(s / 1000, 5.0, 0.3);
    CHECK(curandGenerateUniform(g, f.data(), 1000) == CURAND_STATUS_SUCCESS && f[0] > 0 && f[0] <= 1);
    CHECK(curandSetStream(g, nullptr) == CURAND_STATUS_SUCCESS && curandDestroyGenerator(g) == CURAND_STATUS_SUCCESS);
    CHECK(curandCreateGeneratorHost(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10) == CURAND_STATUS_SUCCESS);
    curandSetPseudoRandomGeneratorSeed(g, 0); curandGenerate(g, bits.data(), 2);
    CHECK(bits[0] == 0x6627e8d5u && bits[1] == 0xe169c58du);
    curandDestroyGenerator(g);
}
"""

BLAS = r"""
#include <cublas_v2.h>
#include <vector>
static unsigned seed = 1;
static double rnd() { seed = seed * 1103515245u + 12345u; return ((seed >> 8) & 0xffff) / 32768.0 - 1.0; }
// Reference: C = alpha op(A) op(B) + beta C, column-major, op by 0 (N) or 1 (T/C).
template <class T>
static void naive(int ta, int tb, int m, int n, int k, T alpha, const T* A, int lda, const T* B, int ldb, T beta, T* C, int ldc) {
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            double acc = 0;
            for (int l = 0; l < k; ++l)
                acc += (double)(ta ? A[l + i * lda] : A[i + l * lda]) * (tb ? B[j + l * ldb] : B[l + j * ldb]);
            C[i + j * ldc] = (T)(alpha * acc + beta * C[i + j * ldc]);
        }
}
static void run() {
    cublasHandle_t h; CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
    const cublasOperation_t ops[3] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
    const int m = 5, n = 4, k = 3, batch = 3;
    for (cublasOperation_t ta : ops) for (cublasOperation_t tb : ops) {
        const int lda = (ta == CUBLAS_OP_N ? m : k) + 2, ldb = (tb == CUBLAS_OP_N ? k : n) + 1, ldc = m + 3;
        const long long sa = lda * 8, sb = ldb * 8, sc = ldc * n + 5;
        std::vector<float> A(sa * batch), B(sb * batch), C(sc * batch), R;
        for (auto& x : A) x = rnd(); for (auto& x : B) x = rnd(); for (auto& x : C) x = rnd();
        R = C;
        const float alpha = 1.5f, beta = -0.5f;
        const int t1 = ta != CUBLAS_OP_N, t2 = tb != CUBLAS_OP_N;
        CHECK(cublasSgemmStridedBatched(h, ta, tb, m, n, k, &alpha, A.data(), lda, sa, B.data(), ldb, sb, &beta,
                                        C.data(), ldc, sc, batch) == CUBLAS_STATUS_SUCCESS);
        for (int i = 0; i < batch; ++i) naive(t1, t2, m, n, k, alpha, &A[i * sa], lda, &B[i * sb], ldb, beta, &R[i * sc], ldc);
        for (size_t i = 0; i < C.size(); ++i) NEAR(C[i], R[i], 1e-5);
        std::vector<double> dA(A.begin(), A.end()), dB(B.begin(), B.end()), dC(ldc * n, 0.0), dR = dC;
        const double one = 1, zero = 0;
        CHECK(cublasDgemm(h, ta, tb, m, n, k, &one, dA.data(), lda, dB.data(), ldb, &zero, dC.data(), ldc) == 0);
        naive(t1, t2, m, n, k, 1.0, dA.data(), lda, dB.data(), ldb, 0.0, dR.data(), ldc);
        for (size_t i = 0; i < dC.size(); ++i) NEAR(dC[i], dR[i], 1e-14);
    }
    // beta == 0 never reads C; pointer arrays; argument checks
    std::vector<float> A(6, 1.0f), B(6, 2.0f), C(4, NAN);
    const float one = 1.0f, zero = 0.0f;
    CHECK(cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, A.data(), 2, B.data(), 3, &zero, C.data(), 2) == 0);
    CHECK(C[0] == 6.0f && C[3] == 6.0f);
    const float* As[1] = {A.data()}; const float* Bs[1] = {B.data()}; float* Cs[1] = {C.data()};
    CHECK(cublasSgemmBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, 2, 2, 3, &one, As, 3, Bs, 3, &one, Cs, 2, 1) == 0 && C[1] == 12.0f);
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, A.data(), 1, B.data(), 3, &zero, C.data(), 2) == CUBLAS_STATUS_INVALID_VALUE);
    CHECK(cublasSgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &one, A.data(), 2, B.data(), 3, &zero, C.data(), 2) == CUBLAS_STATUS_NOT_INITIALIZED);
    CHECK(std::strcmp(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE") == 0);
    // gemv with strides, a transposed matrix and a negative increment
    float M[6] = {1, 2, 3, 4, 5, 6};  // 2x3 column-major
    float x[6] = {1, 0, 1, 0, 1, 0}, y[4] = {10, 0, 20, 0};
    CHECK(cublasSgemv(h, CUBLAS_OP_N, 2, 3, &one, M, 2, x, 2, &one, y, 2) == 0);
    CHECK(y[0] == 10 + 9 && y[2] == 20 + 12);
    float xt[2] = {1, 1}, yt[3] = {0, 0, 0};
    CHECK(cublasSgemv(h, CUBLAS_OP_T, 2, 3, &one, M, 2, xt, 1, &zero, yt, -1) == 0);
    CHECK(yt[2] == 3 && yt[1] == 7 && yt[0] == 11);
    CHECK(cublasSgemv(h, CUBLAS_OP_N, 2, 3, &one, M, 2, x, 0, &one, y, 1) == CUBLAS_STATUS_INVALID_VALUE);
    // level 1
    float v[4] = {3, -4, 0, 12}, w[4] = {1, 1, 1, 1}, r = 0; int idx = 0;
    const float two = 2.0f;
    CHECK(cublasSnrm2(h, 4, v, 1, &r) == 0 && r == 13.0f);
    float big[2] = {3e30f, 4e30f}; cublasSnrm2(h, 2, big, 1, &r); NEAR(r / 5e30f, 1.0, 1e-6);
    CHECK(cublasSdot(h, 4, v, 1, w, 1, &r) == 0 && r == 11.0f);
    CHECK(cublasSasum(h, 4, v, 1, &r) == 0 && r == 19.0f);
    CHECK(cublasIsamax(h, 4, v, 1, &idx) == 0 && idx == 4);
    float ties[3] = {-2, 2, 1}; cublasIsamax(h, 3, ties, 1, &idx); CHECK(idx == 1);
    CHECK(cublasIsamin(h, 4, v, 1, &idx) == 0 && idx == 3);
    CHECK(cublasSaxpy(h, 4, &two, v, 1, w, 1) == 0 && w[0] == 7 && w[1] == -7 && w[3] == 25);
    CHECK(cublasSscal(h, 2, &two, v, 2) == 0 && v[0] == 6 && v[1] == -4 && v[2] == 0);
    double dv[3] = {1, 2, 2}, dr = 0; const double dtwo = 2;
    CHECK(cublasDnrm2(h, 3, dv, 1, &dr) == 0 && dr == 3.0);
    CHECK(cublasDscal(h, 3, &dtwo, dv, 1) == 0 && cublasDdot(h, 3, dv, 1, dv, 1, &dr) == 0 && dr == 36.0);
    // half gemm: exact small integers
    __half ha[4] = {1.0f, 2.0f, 3.0f, 4.0f}, hc[4];
    const __half hone = 1.0f, hzero = 0.0f;
    CHECK(cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &hone, ha, 2, ha, 2, &hzero, hc, 2) == 0);
    CHECK(__half2float(hc[0]) == 7.0f && __half2float(hc[3]) == 22.0f);
    CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE) == 0 && cublasSetStream(h, nullptr) == 0);
    CHECK(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
}
"""


SECTIONS = {"float16": FLOAT16, "math_vector": MATH_VECTOR, "rand": RAND, "blas": BLAS}
MUSA_SECTIONS = {name: body for name, body in SECTIONS.items() if name != "math_vector"}


@pytest.mark.parametrize("face", ["cuda", "musa"])
def test_half_and_bfloat16(face: str, programs: dict[str, Path]) -> None:
    run_section(programs, face, "float16")


def test_math_and_vector_types(programs: dict[str, Path]) -> None:
    run_section(programs, "cuda", "math_vector")


@pytest.mark.parametrize("face", ["cuda", "musa"])
def test_curand(face: str, programs: dict[str, Path]) -> None:
    run_section(programs, face, "rand")


@pytest.mark.parametrize("face", ["cuda", "musa"])
def test_cublas(face: str, programs: dict[str, Path]) -> None:
    run_section(programs, face, "blas")


def test_musa_face_rejects_cuda_names(tmp_path: Path) -> None:
    """A port that still says cublas/curand/__nv_bfloat16 must not compile on the MUSA face.

    The four snippets share one translation unit (g++ reports an error in every function); each
    name must be reported on its own line.
    """
    snippets = {
        "cublasHandle_t": "void a() { cublasHandle_t h; (void)h; }",
        "curand_init": "void b() { murandState s; curand_init(1, 0, 0, &s); }",
        "__nv_bfloat16": "void c() { __nv_bfloat16 x = 1.0f; (void)x; }",
        "CURAND_RNG_PSEUDO_XORWOW": "int d() { return CURAND_RNG_PSEUDO_XORWOW; }",
    }
    header = "#include <mublas.h>\n#include <murand_kernel.h>\n#include <murand.h>\n#include <musa_bf16.h>\n"
    source = header + "\n".join(snippets.values()) + "\nint main() {}\n"
    proc = compile_source(source, "musa", tmp_path, syntax_only=True)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode != 0
    for line, name in enumerate(snippets, start=header.count("\n") + 1):
        assert any(f".cpp:{line}:" in e and "error" in e and name in e for e in err.splitlines()), (name, err[-3000:])


def test_musa_face_has_mublas_own_statuses(tmp_path: Path) -> None:
    """muBLAS spells statuses its own way (rules/cublas/overrides.yaml): a port's
    MUBLAS_STATUS_NOT_IMPLEMENTED (for cuBLAS's NOT_SUPPORTED) and the nearest statuses the
    MU1002 notes suggest compile on the MUSA face and mean what the cuBLAS ones did."""
    source = ("#include <mublas.h>\n#include <cstdio>\n"
              "int main() {\n  float a = 1, x = 0;\n"
              "  bool ok = mublasSnrm2(nullptr, 1, &a, 1, &x) == MUBLAS_STATUS_INVALID_HANDLE\n"
              "      && MUBLAS_STATUS_NOT_IMPLEMENTED != MUBLAS_STATUS_SUCCESS\n"
              "      && MUBLAS_STATUS_MEMORY_ERROR != MUBLAS_STATUS_INTERNAL_ERROR\n"
              "      && MUBLAS_STATUS_CHECK_NUMERICS_FAIL != MUBLAS_STATUS_SUCCESS;\n"
              "  std::printf(ok ? \"ok %s\\n\" : \"wrong %s\\n\", mublasGetStatusName(MUBLAS_STATUS_INVALID_HANDLE));\n"
              "  return ok ? 0 : 1;\n}\n")
    proc = compile_source(source, "musa", tmp_path)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-3000:]
    run = subprocess.run([str(tmp_path / "prog_musa")], capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0 and run.stdout == "ok MUBLAS_STATUS_INVALID_HANDLE\n", run.stdout + run.stderr


def test_musa_face_lacks_the_statuses_mublas_lacks(tmp_path: Path) -> None:
    """A cuBLAS status muBLAS has no spelling for (the rules leave such a comparison and report
    MU1002) does not compile on the MUSA face, as it would not on MUSA: a port verified on the
    emulator with one in it would be a port that fails to build on the real toolchain."""
    missing = ["NOT_INITIALIZED", "ALLOC_FAILED", "ARCH_MISMATCH", "MAPPING_ERROR", "EXECUTION_FAILED",
               "NOT_SUPPORTED", "LICENSE_ERROR"]
    header = "#include <mublas.h>\n"
    source = header + "".join(f"int s{k}() {{ return MUBLAS_STATUS_{name}; }}\n" for k, name in enumerate(missing))
    source += "int main() { return MUBLAS_STATUS_SUCCESS; }\n"
    proc = compile_source(source, "musa", tmp_path, syntax_only=True)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode != 0
    for line, name in enumerate(missing, start=header.count("\n") + 1):
        assert any(f".cpp:{line}:" in e and "error" in e and f"MUBLAS_STATUS_{name}" in e for e in err.splitlines()), \
            (name, err[-3000:])
