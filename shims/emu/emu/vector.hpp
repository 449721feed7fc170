// CUDA's built-in vector types (char1..double4, dim3) and their make_* functions.
//
// Both faces use these names unchanged (MUSA_FACTS §1), so this header is face-neutral.  The types are
// declared at global scope, as CUDA declares them, and not in namespace emu: a program's own operators for
// them (e.g. `float2 operator+(float2, float2)` from a helper header) must be found by argument-dependent
// lookup exactly as they are under nvcc.  No operators are defined here because CUDA defines none.
// Alignments follow CUDA's vector_types.h: 2-element types are aligned to their full size, 4-element types to
// min(full size, 16), 3-element and 1-element types to their element.
#pragma once

#include <type_traits>

#define EMU_VEC1(name, T) \
    struct name {         \
        T x;              \
    };
#define EMU_VEC2(name, T, A) \
    struct alignas(A) name { \
        T x, y;              \
    };
#define EMU_VEC3(name, T) \
    struct name {         \
        T x, y, z;        \
    };
#define EMU_VEC4(name, T, A) \
    struct alignas(A) name { \
        T x, y, z, w;        \
    };
#define EMU_MAKE1(name, T) \
    inline constexpr name make_##name(T x) { return name{x}; }
#define EMU_MAKE2(name, T) \
    inline constexpr name make_##name(T x, T y) { return name{x, y}; }
#define EMU_MAKE3(name, T) \
    inline constexpr name make_##name(T x, T y, T z) { return name{x, y, z}; }
#define EMU_MAKE4(name, T) \
    inline constexpr name make_##name(T x, T y, T z, T w) { return name{x, y, z, w}; }

// One family: base name, element type, alignment of the 2- and 4-element types.
#define EMU_VEC_FAMILY(base, T, A2, A4)                                      \
    EMU_VEC1(base##1, T) EMU_VEC2(base##2, T, A2) EMU_VEC3(base##3, T)       \
    EMU_VEC4(base##4, T, A4) EMU_MAKE1(base##1, T) EMU_MAKE2(base##2, T)     \
    EMU_MAKE3(base##3, T) EMU_MAKE4(base##4, T)

EMU_VEC_FAMILY(char, signed char, 2, 4)
EMU_VEC_FAMILY(uchar, unsigned char, 2, 4)
EMU_VEC_FAMILY(short, short, 4, 8)
EMU_VEC_FAMILY(ushort, unsigned short, 4, 8)
EMU_VEC_FAMILY(int, int, 8, 16)
EMU_VEC_FAMILY(uint, unsigned int, 8, 16)
EMU_VEC_FAMILY(long, long, 2 * sizeof(long), 16)
EMU_VEC_FAMILY(ulong, unsigned long, 2 * sizeof(unsigned long), 16)
EMU_VEC_FAMILY(longlong, long long, 16, 16)
EMU_VEC_FAMILY(ulonglong, unsigned long long, 16, 16)
EMU_VEC_FAMILY(float, float, 8, 16)
EMU_VEC_FAMILY(double, double, 16, 16)

// CUDA 13 spells out the alignment of the 32-byte 4-vectors; the plain names keep 16 (the CUDA 12 layout).
#define EMU_VEC4_ALIGNED(name, T, A) EMU_VEC4(name, T, A) EMU_MAKE4(name, T)
EMU_VEC4_ALIGNED(long4_16a, long, 16)
EMU_VEC4_ALIGNED(long4_32a, long, 32)
EMU_VEC4_ALIGNED(ulong4_16a, unsigned long, 16)
EMU_VEC4_ALIGNED(ulong4_32a, unsigned long, 32)
EMU_VEC4_ALIGNED(longlong4_16a, long long, 16)
EMU_VEC4_ALIGNED(longlong4_32a, long long, 32)
EMU_VEC4_ALIGNED(ulonglong4_16a, unsigned long long, 16)
EMU_VEC4_ALIGNED(ulonglong4_32a, unsigned long long, 32)
EMU_VEC4_ALIGNED(double4_16a, double, 16)
EMU_VEC4_ALIGNED(double4_32a, double, 32)

#undef EMU_VEC4_ALIGNED
#undef EMU_VEC_FAMILY
#undef EMU_VEC1
#undef EMU_VEC2
#undef EMU_VEC3
#undef EMU_VEC4
#undef EMU_MAKE1
#undef EMU_MAKE2
#undef EMU_MAKE3
#undef EMU_MAKE4

// dim3: a uint3 whose components default to 1.  The constructor is a template so that `dim3{n, 1}` with an
// `int n` compiles as it does under nvcc instead of failing g++'s narrowing check; only arithmetic arguments
// are accepted.
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3() : x(1), y(1), z(1) {}
    template <class X, class Y = unsigned int, class Z = unsigned int,
              class = std::enable_if_t<std::is_arithmetic_v<X> && std::is_arithmetic_v<Y> &&
                                       std::is_arithmetic_v<Z>>>
    constexpr dim3(X vx, Y vy = 1u, Z vz = 1u)
        : x(static_cast<unsigned int>(vx)), y(static_cast<unsigned int>(vy)), z(static_cast<unsigned int>(vz)) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};
