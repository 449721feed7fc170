// bfloat16: one type under two faces.  The CUDA face calls it __nv_bfloat16 (cuda_bf16.h), the MUSA face
// __mt_bfloat16 (musa_bf16.h, MUSA_FACTS §1); both are typedefs of __emu_bfloat16 declared here, so a value
// computed through either face has the same bits.  Rounding is shared with half.hpp (emu::fp): conversions
// are IEEE round-to-nearest-even (or the mode their suffix names), arithmetic is done in float and rounded
// once, fma is correctly rounded.  Function names follow CUDA's cuda_bf16.h and are the same on both faces.
#pragma once

#include "half.hpp"

struct __emu_bfloat16_raw {
    unsigned short x;
};
struct __emu_bfloat162_raw {
    unsigned short x, y;
};

struct __emu_bfloat16 {
    unsigned short __x;
    __emu_bfloat16() = default;
    constexpr __emu_bfloat16(const __emu_bfloat16_raw& r) : __x(r.x) {}
    __emu_bfloat16(float f) : __x(emu::fp::encode<emu::fp::BFloatFormat>(f)) {}
    __emu_bfloat16(double d) : __x(emu::fp::encode<emu::fp::BFloatFormat>(d)) {}
    __emu_bfloat16(short v) : __emu_bfloat16(static_cast<double>(v)) {}
    __emu_bfloat16(unsigned short v) : __emu_bfloat16(static_cast<double>(v)) {}
    __emu_bfloat16(int v) : __emu_bfloat16(static_cast<double>(v)) {}
    __emu_bfloat16(unsigned int v) : __emu_bfloat16(static_cast<double>(v)) {}
    __emu_bfloat16(long long v) : __emu_bfloat16(static_cast<double>(v)) {}
    __emu_bfloat16(unsigned long long v) : __emu_bfloat16(static_cast<double>(v)) {}
    __emu_bfloat16& operator=(const __emu_bfloat16_raw& r) {
        __x = r.x;
        return *this;
    }
    constexpr operator __emu_bfloat16_raw() const { return __emu_bfloat16_raw{__x}; }
    operator float() const { return emu::fp::decode<emu::fp::BFloatFormat>(__x); }
    explicit operator bool() const { return (__x & 0x7fff) != 0; }
};

struct alignas(4) __emu_bfloat162 {
    __emu_bfloat16 x, y;
    __emu_bfloat162() = default;
    constexpr __emu_bfloat162(const __emu_bfloat16& a, const __emu_bfloat16& b) : x(a), y(b) {}
    constexpr __emu_bfloat162(const __emu_bfloat162_raw& r)
        : x(__emu_bfloat16_raw{r.x}), y(__emu_bfloat16_raw{r.y}) {}
    __emu_bfloat162& operator=(const __emu_bfloat162_raw& r) {
        x = __emu_bfloat16_raw{r.x};
        y = __emu_bfloat16_raw{r.y};
        return *this;
    }
    constexpr operator __emu_bfloat162_raw() const { return __emu_bfloat162_raw{x.__x, y.__x}; }
};

template <>
struct emu::fp::format_of<__emu_bfloat16> {
    using type = emu::fp::BFloatFormat;
};

#define EMU_H __emu_bfloat16
#define EMU_H2 __emu_bfloat162
#define EMU_HN bfloat16
#include "h16_ops.inc"
#undef EMU_H
#undef EMU_H2
#undef EMU_HN

// The face's spellings of the types: EMU_BF16_FACE_NAMES(nv) on the CUDA face, (mt) on the MUSA face.
#define EMU_BF16_FACE_NAMES(p)                          \
    typedef __emu_bfloat16 __##p##_bfloat16;            \
    typedef __emu_bfloat162 __##p##_bfloat162;          \
    typedef __emu_bfloat16_raw __##p##_bfloat16_raw;    \
    typedef __emu_bfloat162_raw __##p##_bfloat162_raw;  \
    typedef __emu_bfloat16 p##_bfloat16;                \
    typedef __emu_bfloat162 p##_bfloat162;
