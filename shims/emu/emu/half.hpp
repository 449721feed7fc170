// IEEE binary16 (`__half`, `__half2`) and the rounding core shared with bfloat16 (bf16.hpp).
//
// Conversions round exactly as IEEE 754 prescribes (round-to-nearest-even unless a suffix says otherwise;
// overflow to infinity or to the largest finite value by mode; NaN becomes the canonical 0x7fff, as CUDA's
// conversions produce).  Arithmetic is done in float and rounded once to 16 bits: for +, -, *, / and sqrt,
// float's 24-bit significand is at least 2p+2 bits for p = 11 (half) and p = 8 (bf16), so rounding twice
// gives the correctly rounded result.  Fused multiply-add is computed exactly in double with an
// error-free transformation and rounded to odd before the final rounding, so it is correctly rounded too.
// Transcendental functions (hexp, hsin, ...) are evaluated in float and rounded, which is at least as
// accurate as the GPU's approximations; see docs/emulator-numerics.md.
//
// The types live at global scope as in CUDA (argument-dependent lookup must find a program's own overloads
// for them); the rounding core lives in namespace emu::fp.  The per-type functions (__hadd, hexp, __heq2,
// operators, ...) are written once in h16_ops.inc and instantiated here for __half and in bf16.hpp for
// bfloat16.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <math.h>
#include <type_traits>

#include "atomics.hpp"
#include "math.hpp"
#include "vector.hpp"

namespace emu::fp {

// A 16-bit binary floating-point format with E exponent bits and M stored significand bits.
template <int E, int M>
struct Format {
    static constexpr int exp_bits = E;
    static constexpr int man_bits = M;
    static constexpr int bias = (1 << (E - 1)) - 1;
    static constexpr int emin = 1 - bias;
    static constexpr int emax = bias;
    static constexpr std::uint16_t inf = static_cast<std::uint16_t>(((1u << E) - 1) << M);
    static constexpr std::uint16_t max_finite = inf - 1;
    static constexpr std::uint16_t sign = static_cast<std::uint16_t>(1u << (E + M));
    static constexpr std::uint16_t canonical_nan = 0x7fff;
};
using HalfFormat = Format<5, 10>;
using BFloatFormat = Format<8, 7>;

// Rounds a double to the format F.  Every finite double is handled exactly (no intermediate float), so
// __double2half rounds once, as the hardware conversion does.
template <class F>
inline std::uint16_t encode(double x, Round mode = Round::nearest) {
    const std::uint64_t b = bit_cast<std::uint64_t>(x);
    const bool neg = (b >> 63) != 0;
    const std::uint16_t sign = neg ? F::sign : 0;
    const int dexp = static_cast<int>((b >> 52) & 0x7ff);
    const std::uint64_t frac = b & ((std::uint64_t{1} << 52) - 1);
    if (dexp == 0x7ff) return frac ? F::canonical_nan : static_cast<std::uint16_t>(sign | F::inf);
    if (dexp == 0 && frac == 0) return sign;
    // |x| = sig * 2^e2 with an integer significand.
    const std::uint64_t sig = dexp ? (frac | (std::uint64_t{1} << 52)) : frac;
    const int e2 = dexp ? dexp - 1075 : -1074;
    const int lead = e2 + 63 - __builtin_clzll(sig);
    // Too large whatever the rounding: treat as a carry past the largest exponent.
    const bool huge = lead > F::emax + 1;
    const int e_used = lead > F::emin ? lead : F::emin;  // exponent of the result's leading bit position
    const int shift = (e_used - F::man_bits) - e2;      // bits of sig below the result's last place
    std::uint64_t kept = 0;
    bool above_half = false, exactly_half = false, inexact = false;
    if (huge) {
        kept = std::uint64_t{1} << (F::man_bits + 2);
    } else if (shift <= 0) {
        kept = sig << -shift;
    } else if (shift >= 64) {
        inexact = true;
    } else {
        kept = sig >> shift;
        const std::uint64_t rem = sig & ((std::uint64_t{1} << shift) - 1);
        const std::uint64_t halfway = std::uint64_t{1} << (shift - 1);
        inexact = rem != 0;
        above_half = rem > halfway;
        exactly_half = rem == halfway;
    }
    bool up = false;
    switch (mode) {
        case Round::nearest: up = above_half || (exactly_half && (kept & 1)); break;
        case Round::zero: break;
        case Round::up: up = inexact && !neg; break;
        case Round::down: up = inexact && neg; break;
    }
    kept += up;
    const std::uint64_t bits = (static_cast<std::uint64_t>(e_used - F::emin) << F::man_bits) + kept;
    if (huge || bits >= F::inf) {
        const bool to_inf = mode == Round::nearest || (mode == Round::up && !neg) || (mode == Round::down && neg);
        return static_cast<std::uint16_t>(sign | (to_inf ? F::inf : F::max_finite));
    }
    return static_cast<std::uint16_t>(sign | bits);
}

// The exact float value of a 16-bit pattern (both formats fit in float without rounding).
template <class F>
inline float decode(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & F::sign) << (31 - F::exp_bits - F::man_bits);
    const int e = (h >> F::man_bits) & ((1 << F::exp_bits) - 1);
    const std::uint32_t m = h & ((1u << F::man_bits) - 1);
    std::uint32_t bits;
    if (e == (1 << F::exp_bits) - 1) {
        bits = 0x7f800000u | (m << (23 - F::man_bits));
    } else if (e == 0) {
        const float mag = std::ldexp(static_cast<float>(m), F::emin - F::man_bits);
        bits = bit_cast<std::uint32_t>(mag);
    } else {
        bits = (static_cast<std::uint32_t>(e - F::bias + 127) << 23) | (m << (23 - F::man_bits));
    }
    return bit_cast<float>(bits | sign);
}

// a * b + c for 16-bit operands, correctly rounded: the product is exact in double, the sum's rounding
// error is recovered exactly (Knuth's TwoSum), and the sum is rounded to odd so that the final rounding to
// 16 bits cannot suffer from rounding twice.
template <class F>
inline std::uint16_t fma_encode(float a, float b, float c, Round mode = Round::nearest) {
    const double p = static_cast<double>(a) * static_cast<double>(b);
    const double s = p + static_cast<double>(c);
    if (!std::isfinite(s)) return encode<F>(s, mode);
    const double bp = s - p;
    const double err = (p - (s - bp)) + (static_cast<double>(c) - bp);
    double odd = s;
    std::uint64_t sb = bit_cast<std::uint64_t>(s);
    if (err != 0 && (sb & 1) == 0) {
        sb += ((err > 0) == (s > 0)) ? 1 : -1;  // step away from or toward zero, toward the exact value
        odd = bit_cast<double>(sb);
    }
    return encode<F>(odd, mode);
}

// Which format a 16-bit type uses; specialised next to each type.
template <class H>
struct format_of;

template <class H>
inline float to_float(H h) {
    return decode<typename format_of<H>::type>(h.__x);
}
template <class H>
inline H from_bits(std::uint16_t bits) {
    H h;
    h.__x = bits;
    return h;
}
template <class H>
inline H from_double(double v, Round mode = Round::nearest) {
    return from_bits<H>(encode<typename format_of<H>::type>(v, mode));
}
template <class H>
inline bool is_nan(H h) {
    using F = typename format_of<H>::type;
    return (h.__x & ~F::sign) > F::inf;
}

enum class Cmp { eq, ne, le, ge, lt, gt };

// Ordered comparisons are false when either operand is NaN; the unordered (`u`) forms are true then.
template <class H>
inline bool compare(H a, H b, Cmp c, bool unordered) {
    if (is_nan(a) || is_nan(b)) return unordered;
    const float x = to_float(a), y = to_float(b);
    switch (c) {
        case Cmp::eq: return x == y;
        case Cmp::ne: return x != y;
        case Cmp::le: return x <= y;
        case Cmp::ge: return x >= y;
        case Cmp::lt: return x < y;
        case Cmp::gt: return x > y;
    }
    return false;
}

// max/min as CUDA's __hmax/__hmin: a NaN operand yields the other one; two NaNs yield the canonical NaN.
// The `_nan` forms propagate NaN.
template <class H>
inline H max_min(H a, H b, bool is_max, bool propagate_nan) {
    using F = typename format_of<H>::type;
    const bool na = is_nan(a), nb = is_nan(b);
    if (na || nb) {
        if (propagate_nan || (na && nb)) return from_bits<H>(F::canonical_nan);
        return na ? b : a;
    }
    const float x = to_float(a), y = to_float(b);
    return (is_max ? x >= y : x <= y) ? a : b;
}

template <class H>
inline H saturate(H h) {
    if (is_nan(h)) return from_bits<H>(0);
    const float x = to_float(h);
    return x < 0.0f ? from_bits<H>(0) : (x > 1.0f ? from_double<H>(1.0) : h);
}

}  // namespace emu::fp

struct __half_raw {
    unsigned short x;
};
struct __half2_raw {
    unsigned short x, y;
};

struct __half {
    unsigned short __x;
    __half() = default;
    constexpr __half(const __half_raw& r) : __x(r.x) {}
    __half(float f) : __x(emu::fp::encode<emu::fp::HalfFormat>(f)) {}
    __half(double d) : __x(emu::fp::encode<emu::fp::HalfFormat>(d)) {}
    __half(short v) : __half(static_cast<double>(v)) {}
    __half(unsigned short v) : __half(static_cast<double>(v)) {}
    __half(int v) : __half(static_cast<double>(v)) {}
    __half(unsigned int v) : __half(static_cast<double>(v)) {}
    __half(long long v) : __half(static_cast<double>(v)) {}
    __half(unsigned long long v) : __half(static_cast<double>(v)) {}
    __half& operator=(const __half_raw& r) {
        __x = r.x;
        return *this;
    }
    constexpr operator __half_raw() const { return __half_raw{__x}; }
    operator float() const { return emu::fp::decode<emu::fp::HalfFormat>(__x); }
    explicit operator bool() const { return (__x & 0x7fff) != 0; }
};

struct alignas(4) __half2 {
    __half x, y;
    __half2() = default;
    constexpr __half2(const __half& a, const __half& b) : x(a), y(b) {}
    constexpr __half2(const __half2_raw& r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
    __half2& operator=(const __half2_raw& r) {
        x = __half_raw{r.x};
        y = __half_raw{r.y};
        return *this;
    }
    constexpr operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
};

typedef __half half;
typedef __half2 half2;

template <>
struct emu::fp::format_of<__half> {
    using type = emu::fp::HalfFormat;
};

#define EMU_H __half
#define EMU_H2 __half2
#define EMU_HN half
#include "h16_ops.inc"
#undef EMU_H
#undef EMU_H2
#undef EMU_HN

inline __half2 make_half2(__half x, __half y) { return __half2(x, y); }

// The face's extra spellings of the types: EMU_HALF_FACE_NAMES(nv) on the CUDA face, (mt) on the MUSA face.
#define EMU_HALF_FACE_NAMES(p)                    \
    typedef __half __##p##_half;                  \
    typedef __half2 __##p##_half2;                \
    typedef __half_raw __##p##_half_raw;          \
    typedef __half2_raw __##p##_half2_raw;        \
    typedef __half p##_half;                      \
    typedef __half2 p##_half2;
