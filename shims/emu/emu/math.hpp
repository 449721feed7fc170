// CUDA device math functions and intrinsics that <cmath> does not provide (MUSA keeps the names).
//
// Readings (docs/emulator-numerics.md): the fast intrinsics (__expf, __sinf, __fdividef, ...) return the
// accurate libm value instead of the GPU's approximation, except __fdividef's documented zero for huge
// divisors; the directed-rounding forms (__fadd_rz, __fmul_ru, __fdiv_rd, __fsqrt_ru, ...) are exact: the
// round-to-nearest result is corrected by one ulp using the sign of the exact error, which error-free
// transformations (TwoSum, fma residuals) give without touching the FPU's rounding mode.  Float-to-integer
// conversions round by their suffix, saturate to the target range and turn NaN into 0, as the GPU's cvt does.
//
// The functions are at global scope as in CUDA; the rounding machinery is in namespace emu::fp.
#pragma once

#include <cfenv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <math.h>
#include <type_traits>

namespace emu::fp {

enum class Round { nearest, zero, down, up };

template <class To, class From>
inline To bit_cast(const From& from) {
    static_assert(sizeof(To) == sizeof(From), "bit_cast needs equal sizes");
    To to;
    std::memcpy(&to, &from, sizeof to);
    return to;
}

// Float to integer as the GPU converts: rounded by mode, NaN to 0, saturated to the target's range.
template <class T>
inline T to_integer(double v, Round mode) {
    if (std::isnan(v)) return 0;
    switch (mode) {
        case Round::nearest: v = std::nearbyint(v); break;
        case Round::zero: v = std::trunc(v); break;
        case Round::down: v = std::floor(v); break;
        case Round::up: v = std::ceil(v); break;
    }
    const double lo = static_cast<double>(std::numeric_limits<T>::min());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (v <= lo) return std::numeric_limits<T>::min();
    if (v >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
}

// Turns a round-to-nearest result into the result of `mode`, given the sign of (exact - rounded):
// err > 0 means the exact value lies above `rn`.  An infinite `rn` from finite operands is an overflow,
// whose exact value lies toward zero.
template <class T>
inline T directed(T rn, T err, Round mode, bool finite_operands) {
    if (std::isnan(rn)) return rn;
    if (std::isinf(rn)) {
        if (!finite_operands) return rn;
        err = -rn;
    }
    if (err == 0 || mode == Round::nearest) return rn;
    const T inf = std::numeric_limits<T>::infinity();
    switch (mode) {
        case Round::up: return err > 0 ? std::nextafter(rn, inf) : rn;
        case Round::down: return err < 0 ? std::nextafter(rn, -inf) : rn;
        case Round::zero: return ((err > 0) != (rn > 0)) ? std::nextafter(rn, T(0)) : rn;
        default: return rn;
    }
}

template <class T>
inline T add(T a, T b, Round mode) {
    const T s = a + b;
    if (mode == Round::nearest || !std::isfinite(s)) return directed(s, T(0), mode, std::isfinite(a) && std::isfinite(b));
    const T bb = s - a;  // TwoSum: the exact error of s
    const T err = (a - (s - bb)) + (b - bb);
    if (s == 0 && err == 0 && mode == Round::down && a != 0) return -T(0);  // x + (-x) is -0 rounding down
    return directed(s, err, mode, true);
}
template <class T>
inline T mul(T a, T b, Round mode) {
    const T p = a * b;
    return directed(p, std::fma(a, b, -p), mode, std::isfinite(a) && std::isfinite(b));
}
template <class T>
inline T div(T a, T b, Round mode) {
    const T q = a / b;
    if (!std::isfinite(q) || b == 0) return directed(q, T(0), mode, std::isfinite(a) && b != 0);
    const T rem = std::fma(-q, b, a);  // a - q*b, exact
    return directed(q, (b > 0) ? rem : -rem, mode, true);
}
template <class T>
inline T sqrt(T a, Round mode) {
    const T s = std::sqrt(a);
    if (!(s > 0) || !std::isfinite(s)) return s;
    return directed(s, std::fma(-s, s, a), mode, true);
}
// float a*b+c in any mode: the product is exact in double, the double sum's error is exact (TwoSum),
// and the double result's distance to the nearest float, plus that error, gives the direction.
inline float fmaf(float a, float b, float c, Round mode) {
    const float rn = std::fma(a, b, c);
    if (mode == Round::nearest || !std::isfinite(rn)) {
        return directed(rn, 0.0f, mode, std::isfinite(a) && std::isfinite(b) && std::isfinite(c));
    }
    const double p = static_cast<double>(a) * b, s = p + c;
    const double bb = s - p, e = (p - (s - bb)) + (c - bb);
    const double residual = (s - static_cast<double>(rn)) + e;
    return directed(rn, static_cast<float>(residual > 0 ? 1 : (residual < 0 ? -1 : 0)), mode, true);
}
// double a*b+c with a directed mode: no wider type holds the exact value, so the FPU mode is switched for
// the one operation (volatile keeps the compiler from moving it across the mode changes).
inline double fma(double a, double b, double c, Round mode) {
    if (mode == Round::nearest) return std::fma(a, b, c);
    const int saved = std::fegetround();
    std::fesetround(mode == Round::zero ? FE_TOWARDZERO : (mode == Round::up ? FE_UPWARD : FE_DOWNWARD));
    volatile double va = a, vb = b, vc = c;
    volatile double r = std::fma(va, vb, vc);
    std::fesetround(saved);
    return r;
}
// An integer converted to F in any mode; the exact difference is computed in 128-bit integers.
template <class F, class I>
inline F from_integer(I v, Round mode) {
    const F rn = static_cast<F>(v);
    const __int128 diff = static_cast<__int128>(v) - static_cast<__int128>(rn);
    return directed(rn, F(diff > 0 ? 1 : (diff < 0 ? -1 : 0)), mode, true);
}
inline float narrow(double d, Round mode) {
    const float rn = static_cast<float>(d);
    if (!std::isfinite(rn)) return directed(rn, 0.0f, mode, std::isfinite(d));
    const double err = d - static_cast<double>(rn);
    return directed(rn, static_cast<float>(err > 0 ? 1 : (err < 0 ? -1 : 0)), mode, true);
}

// erfc^-1 on (0, 2): Giles' single-precision approximation (M. Giles, "Approximating the erfinv function",
// GPU Computing Gems, 2011) as a start, polished by Newton steps on erf or erfc in double.
inline double erfcinv(double z) {
    if (std::isnan(z) || z < 0 || z > 2) return std::numeric_limits<double>::quiet_NaN();
    if (z == 0) return std::numeric_limits<double>::infinity();
    if (z == 2) return -std::numeric_limits<double>::infinity();
    const double y = 1.0 - z;  // erfinv argument
    double w = -std::log(z * (2.0 - z)), p;
    if (w < 5.0) {
        w -= 2.5;
        p = 2.81022636e-08;
        for (double k : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                         -0.00417768164, 0.246640727, 1.50140941})
            p = k + p * w;
    } else {
        w = std::sqrt(w) - 3.0;
        p = -0.000200214257;
        for (double k : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                         0.00943887047, 1.00167406, 2.83297682})
            p = k + p * w;
    }
    double x = p * y;
    const double two_over_sqrt_pi = 1.1283791670955126;
    for (int i = 0; i < 4; ++i) {
        const double slope = two_over_sqrt_pi * std::exp(-x * x);
        if (slope == 0) break;
        // Newton on whichever of erf/erfc is accurate here.
        x -= (std::fabs(y) < 0.5) ? (std::erf(x) - y) / slope : -(std::erfc(x) - z) / slope;
    }
    return x;
}
inline double erfcx(double x) {
    if (x < 10.0) return std::exp(x * x) * std::erfc(x);
    // Asymptotic series 1/(x sqrt(pi)) * sum (-1)^n (2n-1)!! / (2x^2)^n.
    const double t = 1.0 / (2.0 * x * x);
    double term = 1.0, sum = 1.0;
    for (int n = 1; n < 12; ++n) {
        term *= -(2.0 * n - 1.0) * t;
        sum += term;
    }
    return sum / (x * 1.7724538509055160);
}
// sin(pi x) and cos(pi x) with exact zeros and ones at integers and half-integers.
inline double sinpi(double x) {
    if (!std::isfinite(x)) return std::numeric_limits<double>::quiet_NaN();
    const double r = std::remainder(x, 2.0);  // exact, in [-1, 1]
    if (r == 0 || std::fabs(r) == 1.0) return std::copysign(0.0, x);
    if (std::fabs(r) == 0.5) return std::copysign(1.0, r);
    return std::sin(3.141592653589793 * r);
}
inline double cospi(double x) {
    if (!std::isfinite(x)) return std::numeric_limits<double>::quiet_NaN();
    const double r = std::fabs(std::remainder(x, 2.0));
    if (r == 0.5) return 0.0;
    if (r == 0) return 1.0;
    if (r == 1.0) return -1.0;
    return std::cos(3.141592653589793 * r);
}

}  // namespace emu::fp

// ---- directed-rounding arithmetic: __fadd_rn ... __dsqrt_rd -------------------------------------------
#define EMU_ROUNDED4(macro) \
    macro(rn, emu::fp::Round::nearest) macro(rz, emu::fp::Round::zero) macro(ru, emu::fp::Round::up) macro(rd, emu::fp::Round::down)
#define EMU_FP_OPS(sfx, mode)                                                                                  \
    inline float __fadd_##sfx(float a, float b) { return emu::fp::add(a, b, mode); }                           \
    inline float __fsub_##sfx(float a, float b) { return emu::fp::add(a, -b, mode); }                          \
    inline float __fmul_##sfx(float a, float b) { return emu::fp::mul(a, b, mode); }                           \
    inline float __fdiv_##sfx(float a, float b) { return emu::fp::div(a, b, mode); }                           \
    inline float __frcp_##sfx(float a) { return emu::fp::div(1.0f, a, mode); }                                 \
    inline float __fsqrt_##sfx(float a) { return emu::fp::sqrt(a, mode); }                                     \
    inline float __fmaf_##sfx(float a, float b, float c) { return emu::fp::fmaf(a, b, c, mode); }              \
    inline double __dadd_##sfx(double a, double b) { return emu::fp::add(a, b, mode); }                        \
    inline double __dsub_##sfx(double a, double b) { return emu::fp::add(a, -b, mode); }                       \
    inline double __dmul_##sfx(double a, double b) { return emu::fp::mul(a, b, mode); }                        \
    inline double __ddiv_##sfx(double a, double b) { return emu::fp::div(a, b, mode); }                        \
    inline double __drcp_##sfx(double a) { return emu::fp::div(1.0, a, mode); }                                \
    inline double __dsqrt_##sfx(double a) { return emu::fp::sqrt(a, mode); }                                   \
    inline double __fma_##sfx(double a, double b, double c) { return emu::fp::fma(a, b, c, mode); }            \
    inline float __double2float_##sfx(double d) { return emu::fp::narrow(d, mode); }                           \
    inline float __int2float_##sfx(int v) { return emu::fp::from_integer<float>(v, mode); }                    \
    inline float __uint2float_##sfx(unsigned int v) { return emu::fp::from_integer<float>(v, mode); }          \
    inline float __ll2float_##sfx(long long v) { return emu::fp::from_integer<float>(v, mode); }               \
    inline float __ull2float_##sfx(unsigned long long v) { return emu::fp::from_integer<float>(v, mode); }     \
    inline double __ll2double_##sfx(long long v) { return emu::fp::from_integer<double>(v, mode); }            \
    inline double __ull2double_##sfx(unsigned long long v) { return emu::fp::from_integer<double>(v, mode); }  \
    inline int __float2int_##sfx(float f) { return emu::fp::to_integer<int>(f, mode); }                        \
    inline unsigned int __float2uint_##sfx(float f) { return emu::fp::to_integer<unsigned int>(f, mode); }     \
    inline long long __float2ll_##sfx(float f) { return emu::fp::to_integer<long long>(f, mode); }             \
    inline unsigned long long __float2ull_##sfx(float f) { return emu::fp::to_integer<unsigned long long>(f, mode); } \
    inline int __double2int_##sfx(double d) { return emu::fp::to_integer<int>(d, mode); }                      \
    inline unsigned int __double2uint_##sfx(double d) { return emu::fp::to_integer<unsigned int>(d, mode); }   \
    inline long long __double2ll_##sfx(double d) { return emu::fp::to_integer<long long>(d, mode); }           \
    inline unsigned long long __double2ull_##sfx(double d) { return emu::fp::to_integer<unsigned long long>(d, mode); }
EMU_ROUNDED4(EMU_FP_OPS)
#undef EMU_FP_OPS
#undef EMU_ROUNDED4
inline double __int2double_rn(int v) { return v; }
inline double __uint2double_rn(unsigned int v) { return v; }
inline float __frsqrt_rn(float a) { return emu::fp::narrow(1.0 / std::sqrt(static_cast<double>(a)), emu::fp::Round::nearest); }

// ---- fast intrinsics: the accurate value (see the header comment) --------------------------------------
inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline void __sincosf(float x, float* s, float* c) {
    *s = std::sin(x);
    *c = std::cos(x);
}
// CUDA documents __fdividef(x, y) as 0 for 2^126 < |y| < 2^128 (and NaN when x is infinite there).
inline float __fdividef(float x, float y) {
    if (std::isfinite(y) && std::fabs(y) > 0x1p126f) return std::isinf(x) ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
    return x / y;
}
inline float fdividef(float x, float y) { return __fdividef(x, y); }
inline float __saturatef(float x) { return std::isnan(x) ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x)); }

// ---- CUDA math functions missing from libm, float and double, with CUDA's C++ float overloads ----------
#define EMU_MATH1(name, fexpr, dexpr)                                                        \
    inline float name##f(float x) { return static_cast<float>(fexpr); }                      \
    inline double name(double x) { return dexpr; }                                           \
    inline float name(float x) { return name##f(x); }
EMU_MATH1(rsqrt, 1.0 / std::sqrt(static_cast<double>(x)), 1.0 / std::sqrt(x))
EMU_MATH1(rcbrt, 1.0 / std::cbrt(static_cast<double>(x)), 1.0 / std::cbrt(x))
EMU_MATH1(sinpi, emu::fp::sinpi(x), emu::fp::sinpi(x))
EMU_MATH1(cospi, emu::fp::cospi(x), emu::fp::cospi(x))
EMU_MATH1(erfinv, emu::fp::erfcinv(1.0 - x), emu::fp::erfcinv(1.0 - x))
EMU_MATH1(erfcinv, emu::fp::erfcinv(x), emu::fp::erfcinv(x))
EMU_MATH1(erfcx, emu::fp::erfcx(x), emu::fp::erfcx(x))
EMU_MATH1(normcdf, 0.5 * std::erfc(-static_cast<double>(x) * 0.70710678118654752), 0.5 * std::erfc(-x * 0.70710678118654752))
EMU_MATH1(normcdfinv, -1.4142135623730951 * emu::fp::erfcinv(2.0 * x), -1.4142135623730951 * emu::fp::erfcinv(2.0 * x))
EMU_MATH1(cyl_bessel_i0, std::cyl_bessel_i(0.0, std::fabs(static_cast<double>(x))), std::cyl_bessel_i(0.0, std::fabs(x)))
EMU_MATH1(cyl_bessel_i1, std::copysign(std::cyl_bessel_i(1.0, std::fabs(static_cast<double>(x))), x),
          std::copysign(std::cyl_bessel_i(1.0, std::fabs(x)), x))
#undef EMU_MATH1
inline void sincospif(float x, float* s, float* c) {
    *s = sinpif(x);
    *c = cospif(x);
}
inline void sincospi(double x, double* s, double* c) {
    *s = sinpi(x);
    *c = cospi(x);
}
inline void sincospi(float x, float* s, float* c) { sincospif(x, s, c); }
#if !defined(__GLIBC__)
// glibc declares these GNU extensions itself (g++ and clang++ define _GNU_SOURCE for C++).
inline void sincosf(float x, float* s, float* c) { __sincosf(x, s, c); }
inline void sincos(double x, double* s, double* c) {
    *s = std::sin(x);
    *c = std::cos(x);
}
inline float exp10f(float x) { return std::pow(10.0f, x); }
inline double exp10(double x) { return std::pow(10.0, x); }
#endif
inline void sincos(float x, float* s, float* c) { __sincosf(x, s, c); }
inline float rhypotf(float x, float y) { return static_cast<float>(1.0 / std::hypot(static_cast<double>(x), y)); }
inline double rhypot(double x, double y) { return 1.0 / std::hypot(x, y); }
inline float norm3df(float a, float b, float c) { return static_cast<float>(std::hypot(std::hypot(double(a), b), c)); }
inline double norm3d(double a, double b, double c) { return std::hypot(std::hypot(a, b), c); }
inline float rnorm3df(float a, float b, float c) { return static_cast<float>(1.0 / norm3d(a, b, c)); }
inline double rnorm3d(double a, double b, double c) { return 1.0 / norm3d(a, b, c); }
inline float norm4df(float a, float b, float c, float d) {
    return static_cast<float>(std::hypot(std::hypot(double(a), b), std::hypot(double(c), d)));
}
inline double norm4d(double a, double b, double c, double d) { return std::hypot(std::hypot(a, b), std::hypot(c, d)); }
inline float rnorm4df(float a, float b, float c, float d) { return static_cast<float>(1.0 / norm4d(a, b, c, d)); }
inline double rnorm4d(double a, double b, double c, double d) { return 1.0 / norm4d(a, b, c, d); }
inline double norm(int dim, const double* p) {
    double s = 0;
    for (int i = 0; i < dim; ++i) s = std::hypot(s, p[i]);
    return s;
}
inline float normf(int dim, const float* p) {
    double s = 0;
    for (int i = 0; i < dim; ++i) s = std::hypot(s, static_cast<double>(p[i]));
    return static_cast<float>(s);
}
inline double rnorm(int dim, const double* p) { return 1.0 / norm(dim, p); }
inline float rnormf(int dim, const float* p) { return static_cast<float>(1.0 / static_cast<double>(normf(dim, p))); }

// ---- integer intrinsics --------------------------------------------------------------------------------
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
    return (static_cast<unsigned long long>(__brev(static_cast<unsigned int>(x))) << 32) | __brev(static_cast<unsigned int>(x >> 32));
}
// Byte i of the result is byte (s >> 4i) & 7 of the 8-byte value {y:x} (x holds bytes 0-3).
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    const unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
    unsigned int r = 0;
    for (int i = 0; i < 4; ++i) r |= static_cast<unsigned int>((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
// Funnel shifts of the 64-bit value {hi:lo}: _l/_r use shift & 31, _lc/_rc clamp the shift to 32.
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>((v << (shift & 31)) >> 32);
}
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>((v << (shift < 32 ? shift : 32)) >> 32);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>(v >> (shift & 31));
}
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
    const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
    return static_cast<unsigned int>(v >> (shift < 32 ? shift : 32));
}
inline int __mul24(int x, int y) {
    const long long a = static_cast<int>(static_cast<unsigned int>(x) << 8) >> 8;  // sign-extend low 24 bits
    const long long b = static_cast<int>(static_cast<unsigned int>(y) << 8) >> 8;
    return static_cast<int>(static_cast<unsigned int>(a * b));
}
inline unsigned int __umul24(unsigned int x, unsigned int y) { return (x & 0xffffffu) * (y & 0xffffffu); }
inline int __mulhi(int x, int y) { return static_cast<int>((static_cast<long long>(x) * y) >> 32); }
inline unsigned int __umulhi(unsigned int x, unsigned int y) {
    return static_cast<unsigned int>((static_cast<unsigned long long>(x) * y) >> 32);
}
inline long long __mul64hi(long long x, long long y) { return static_cast<long long>((static_cast<__int128>(x) * y) >> 64); }
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
    return static_cast<unsigned long long>((static_cast<unsigned __int128>(x) * y) >> 64);
}
inline unsigned int __sad(int x, int y, unsigned int z) {
    return z + static_cast<unsigned int>(x > y ? static_cast<long long>(x) - y : static_cast<long long>(y) - x);
}
inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return z + (x > y ? x - y : y - x); }
inline int __hadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y) >> 1); }
inline int __rhadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y + 1) >> 1); }
inline unsigned int __uhadd(unsigned int x, unsigned int y) {
    return static_cast<unsigned int>((static_cast<unsigned long long>(x) + y) >> 1);
}
inline unsigned int __urhadd(unsigned int x, unsigned int y) {
    return static_cast<unsigned int>((static_cast<unsigned long long>(x) + y + 1) >> 1);
}
// Four-way byte and two-way halfword dot products with 32-bit accumulation.
inline int __dp4a(int a, int b, int c) {
    for (int i = 0; i < 4; ++i) c += static_cast<signed char>(a >> (8 * i)) * static_cast<signed char>(b >> (8 * i));
    return c;
}
inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
    for (int i = 0; i < 4; ++i) c += ((a >> (8 * i)) & 0xff) * ((b >> (8 * i)) & 0xff);
    return c;
}

// ---- bit reinterpretation ------------------------------------------------------------------------------
inline float __int_as_float(int x) { return emu::fp::bit_cast<float>(x); }
inline int __float_as_int(float x) { return emu::fp::bit_cast<int>(x); }
inline float __uint_as_float(unsigned int x) { return emu::fp::bit_cast<float>(x); }
inline unsigned int __float_as_uint(float x) { return emu::fp::bit_cast<unsigned int>(x); }
inline double __longlong_as_double(long long x) { return emu::fp::bit_cast<double>(x); }
inline long long __double_as_longlong(double x) { return emu::fp::bit_cast<long long>(x); }
inline int __double2hiint(double x) { return static_cast<int>(emu::fp::bit_cast<unsigned long long>(x) >> 32); }
inline int __double2loint(double x) { return static_cast<int>(emu::fp::bit_cast<unsigned long long>(x)); }
inline double __hiloint2double(int hi, int lo) {
    return emu::fp::bit_cast<double>((static_cast<unsigned long long>(static_cast<unsigned int>(hi)) << 32) |
                                     static_cast<unsigned int>(lo));
}

// ---- min/max: CUDA's overload set (mixed signedness picks the unsigned type; floats as fminf/fmaxf) -----
#define EMU_MINMAX(R, A, B)                                                             \
    inline R min(A a, B b) { return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); } \
    inline R max(A a, B b) { return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a) : static_cast<R>(b); }
EMU_MINMAX(int, int, int)
EMU_MINMAX(unsigned int, unsigned int, unsigned int)
EMU_MINMAX(unsigned int, int, unsigned int)
EMU_MINMAX(unsigned int, unsigned int, int)
EMU_MINMAX(long, long, long)
EMU_MINMAX(unsigned long, unsigned long, unsigned long)
EMU_MINMAX(unsigned long, long, unsigned long)
EMU_MINMAX(unsigned long, unsigned long, long)
EMU_MINMAX(long long, long long, long long)
EMU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
EMU_MINMAX(unsigned long long, long long, unsigned long long)
EMU_MINMAX(unsigned long long, unsigned long long, long long)
#undef EMU_MINMAX
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
inline double min(float a, double b) { return std::fmin(static_cast<double>(a), b); }
inline double max(float a, double b) { return std::fmax(static_cast<double>(a), b); }
inline double min(double a, float b) { return std::fmin(a, static_cast<double>(b)); }
inline double max(double a, float b) { return std::fmax(a, static_cast<double>(b)); }
inline unsigned int umin(unsigned int a, unsigned int b) { return min(a, b); }
inline unsigned int umax(unsigned int a, unsigned int b) { return max(a, b); }
inline long long llmin(long long a, long long b) { return min(a, b); }
inline long long llmax(long long a, long long b) { return max(a, b); }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return min(a, b); }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return max(a, b); }

// ---- cache-hinted loads and stores: device memory is host memory, so they are plain accesses -----------
template <class T>
inline T __ldg(const T* p) { return *p; }
template <class T>
inline T __ldcg(const T* p) { return *p; }
template <class T>
inline T __ldca(const T* p) { return *p; }
template <class T>
inline T __ldcs(const T* p) { return *p; }
template <class T>
inline T __ldlu(const T* p) { return *p; }
template <class T>
inline T __ldcv(const T* p) { return *p; }
template <class T>
inline void __stwb(T* p, T v) { *p = v; }
template <class T>
inline void __stcg(T* p, T v) { *p = v; }
template <class T>
inline void __stcs(T* p, T v) { *p = v; }
template <class T>
inline void __stwt(T* p, T v) { *p = v; }
